// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Holds the native coin sent at deployment until a time, then pays it to the deployer.
contract Lock {
    uint256 public immutable unlockTime;
    address payable public immutable owner;

    event Withdrawal(uint256 amount, uint256 when);

    constructor(uint256 until) payable {
        require(block.timestamp < until, "Unlock time must be in the future");
        unlockTime = until;
        owner = payable(msg.sender);
    }

    function withdraw() external {
        require(block.timestamp >= unlockTime, "Too early");
        require(msg.sender == owner, "Not the owner");
        uint256 amount = address(this).balance;
        emit Withdrawal(amount, block.timestamp);
        owner.transfer(amount);
    }
}
