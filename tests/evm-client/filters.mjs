// ethers v6 against a running Lantau node over HTTP: `contract.on` (which ethers serves with
// eth_newFilter / eth_getFilterChanges) delivers each Transfer exactly once, and ethers
// classifies the node's refusals (nonce too low, insufficient funds) as it does geth's.
// Started by `crates/node/tests/it/evm_client.rs`, which passes: ETH_URL, ALICE_KEY (0x hex),
// BOB, TOKEN (addresses), PAYLOAD_ALICE_BOB (0x hex protobuf Travel Rule payload), N (how many
// transfers). Prints one JSON line; exits 1 on the first failed check.
import assert from 'node:assert/strict';
import { Contract, JsonRpcProvider, Wallet, isError } from 'ethers';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing ${k}`);
  return v;
};
const provider = new JsonRpcProvider(env('ETH_URL'), 852, { staticNetwork: true, pollingInterval: 100 });
const trail = [];
provider.on('debug', (e) => {
  if (e.action === 'sendRpcPayload') trail.push(JSON.stringify(e.payload).slice(0, 160));
  if (e.action === 'receiveRpcResult') trail.push('  <- ' + JSON.stringify(e.result).slice(0, 160));
});
const dump = (e) => {
  console.error(trail.join('\n'));
  console.error(e);
  process.exit(1);
};
const alice = new Wallet(env('ALICE_KEY'), provider);
const bob = env('BOB');
const n = Number(env('N'));
const token = new Contract(
  env('TOKEN'),
  [
    'function transferWithTravelRule(address to, uint256 amount, bytes payload) returns (bool)',
    'event Transfer(address indexed from, address indexed to, uint256 value)',
  ],
  alice,
);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// 1. contract.on over HTTP: every Transfer once.
const seen = [];
await token.on('Transfer', (from, to, value, ev) => {
  seen.push({ tx: ev.log.transactionHash, index: ev.log.index, value: value.toString() });
});
const sent = [];
// ethers keeps a provider answer for 250 ms, longer than a dev chain's block: the nonces are
// counted here rather than asked again after each receipt.
const first = await provider.getTransactionCount(alice.address, 'pending');
try {
  for (let i = 0; i < n; i++) {
    const tx = await token.transferWithTravelRule(bob, BigInt(i + 1), env('PAYLOAD_ALICE_BOB'), { nonce: first + i });
    const r = await tx.wait(1, 30_000);
    assert.equal(r.status, 1);
    sent.push(tx.hash);
  }
} catch (e) {
  dump(e);
}
for (let t = 0; t < 300 && seen.length < n; t++) await sleep(100);
// Many more polls: nothing is delivered twice.
await sleep(1500);
await token.removeAllListeners();
assert.equal(seen.length, n, JSON.stringify(seen));
assert.deepEqual(seen.map((s) => s.tx).sort(), [...sent].sort());
assert.deepEqual(seen.map((s) => s.value).sort(), Array.from({ length: n }, (_, i) => String(i + 1)).sort());

// 2. Refusals ethers classifies: a nonce already used, a sender without the funds.
const nonce = await provider.getTransactionCount(alice.address, 'latest');
try {
  await alice.sendTransaction({ to: bob, value: 1n, nonce: nonce - 1, gasLimit: 21000n, gasPrice: 2_000_000_000n });
  assert.fail('a used nonce was accepted');
} catch (e) {
  assert.ok(isError(e, 'NONCE_EXPIRED'), `nonce too low: ${e.code} ${e.message}`);
}
const broke = Wallet.createRandom().connect(provider);
try {
  await broke.sendTransaction({ to: bob, value: 1n, nonce: 0, gasLimit: 21000n, gasPrice: 2_000_000_000n, chainId: 852n });
  assert.fail('a transaction without funds was accepted');
} catch (e) {
  assert.ok(isError(e, 'INSUFFICIENT_FUNDS'), `insufficient funds: ${e.code} ${e.message}`);
}

console.log(JSON.stringify({ seen: seen.length, sent }));
process.exit(0);
