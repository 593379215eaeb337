// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// OpenZeppelin's ERC-20, its whole supply minted to the deployer.
contract Token is ERC20 {
    constructor(uint256 supply) ERC20("Fixture Token", "FIX") {
        _mint(msg.sender, supply);
    }
}
