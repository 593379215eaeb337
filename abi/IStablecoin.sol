// SPDX-License-Identifier: Apache-2.0
pragma solidity ^0.8.20;

/// The extended ERC-20 interface of a stablecoin's precompile: the chain answers it at the
/// token pair's address (docs/modules/evm.md). The evm module's precompile and the client
/// crate's calldata builders are both generated from this one file.
interface IStablecoin {
    function name() external view returns (string memory);
    function symbol() external view returns (string memory);
    function decimals() external view returns (uint8);
    function totalSupply() external view returns (uint256);
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function transferWithTravelRule(address to, uint256 amount, bytes calldata payload) external returns (bool);
    /// Requests the redemption of `amount` of the caller's balance for fiat paid to
    /// `payoutRef` (UTF-8): the amount moves to the redemption escrow (a Transfer to it) and the
    /// request's id is returned (chain.stablecoin.v1.MsgRequestRedemption).
    function redeem(uint256 amount, bytes calldata payoutRef) external returns (uint256 id);
    event Transfer(address indexed from, address indexed to, uint256 value);
}
