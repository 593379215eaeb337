// ethers v6 against a Lantau node whose blocks come slowly enough for a transaction to wait:
// MetaMask's "speed up" (same nonce, fees 10% higher) replaces a waiting transaction, and a
// replacement without the bump is classified REPLACEMENT_UNDERPRICED, as against geth.
// Started by `crates/node/tests/it/evm_rpc.rs`, which passes ETH_URL, ALICE_KEY (0x hex), BOB.
// Prints one JSON line; exits 1 on the first failed check.
import assert from 'node:assert/strict';
import { JsonRpcProvider, Wallet, isError } from 'ethers';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing ${k}`);
  return v;
};
const provider = new JsonRpcProvider(env('ETH_URL'), 852, { staticNetwork: true, pollingInterval: 100 });
const alice = new Wallet(env('ALICE_KEY'), provider);
const bob = env('BOB');
const nonce = await provider.getTransactionCount(alice.address, 'pending');
const send = (fee, tip, value) =>
  alice.sendTransaction({ to: bob, value, nonce, gasLimit: 21000n, maxFeePerGas: fee, maxPriorityFeePerGas: tip, chainId: 852n });

const first = await send(2_000_000_000n, 1_000_000_000n, 1n);
try {
  await send(2_000_000_000n, 1_000_000_000n, 2n);
  assert.fail('a replacement without a fee bump was accepted');
} catch (e) {
  assert.ok(isError(e, 'REPLACEMENT_UNDERPRICED'), `underpriced: ${e.code} ${e.message}`);
}
const faster = await send(2_200_000_000n, 1_100_000_000n, 3n);
const r = await faster.wait(1, 30_000);
assert.equal(r.status, 1);
assert.equal(await provider.getTransactionReceipt(first.hash), null);
console.log(JSON.stringify({ replaced: first.hash, by: faster.hash }));
process.exit(0);
