// SPDX-License-Identifier: Apache-2.0
// Test contracts for the EVM path, compiled by the tests with solc-js.
pragma solidity ^0.8.20;

interface IStablecoin {
    function transferWithTravelRule(address to, uint256 amount, bytes calldata payload) external returns (bool);
    function balanceOf(address account) external view returns (uint256);
    function decimals() external view returns (uint8);
}

/// A plain contract: state, a log, a view.
contract Counter {
    event Counted(address indexed by, uint256 n);
    uint256 public n;

    function inc() external {
        n += 1;
        emit Counted(msg.sender, n);
    }
}

/// An intermediary: pays from its own balance, tries tricks, catches reverts.
contract Intermediary {
    event Caught(bool ok);

    /// Pays `to` from this contract's own balance (the precompile debits msg.sender).
    function pay(IStablecoin t, address to, uint256 amount, bytes calldata payload) external returns (bool) {
        return t.transferWithTravelRule(to, amount, payload);
    }

    /// Pays, then reverts: everything the payment wrote must be undone.
    function payThenRevert(IStablecoin t, address to, uint256 amount, bytes calldata payload) external {
        t.transferWithTravelRule(to, amount, payload);
        revert("undo");
    }

    /// Calls payThenRevert and swallows its revert, then carries on (and logs).
    function tryPay(IStablecoin t, address to, uint256 amount, bytes calldata payload) external returns (bool ok) {
        try this.payThenRevert(t, to, amount, payload) {
            ok = true;
        } catch {
            ok = false;
        }
        emit Caught(ok);
    }

    /// DELEGATECALL into the precompile: must fail (it would run in this contract's context).
    function viaDelegatecall(address t, address to, uint256 amount, bytes calldata payload) external returns (bool ok) {
        (ok, ) = t.delegatecall(abi.encodeWithSignature("transferWithTravelRule(address,uint256,bytes)", to, amount, payload));
    }

    /// STATICCALL into a state-changing method: must fail.
    function viaStaticcall(address t, address to, uint256 amount, bytes calldata payload) external view returns (bool ok) {
        (ok, ) = t.staticcall(abi.encodeWithSignature("transferWithTravelRule(address,uint256,bytes)", to, amount, payload));
    }

    /// STATICCALL into a view is fine.
    function decimalsOf(IStablecoin t) external view returns (uint8) {
        return t.decimals();
    }
}
