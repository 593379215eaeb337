// The EVM path driven by a real Ethereum client library (viem) against a running Lantau node.
// Started by the Rust test `crates/node/tests/it/evm_client.rs`, which starts the node, prepares
// the identities and passes everything through the environment:
//   ETH_URL, ALICE_KEY, CAROL_KEY (0x hex private keys), BOB, TOKEN (addresses),
//   PAYLOAD_ALICE_BOB, PAYLOAD_INTERMEDIARY_BOB (protobuf Travel Rule payloads, 0x hex),
//   INTERMEDIARY (the address carol's first deployment gets).
// Prints one JSON line with what the Rust side cross-checks (hashes, addresses); exits 1 on
// the first failed check.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPublicClient, createWalletClient, defineChain, http, parseAbi, decodeEventLog, BaseError, ContractFunctionRevertedError } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

const here = path.dirname(fileURLToPath(import.meta.url));
const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing ${k}`);
  return v;
};
const url = env('ETH_URL');
const chain = defineChain({ id: 852, name: 'Lantau dev', nativeCurrency: { name: 'Lantau', symbol: 'LANTAU', decimals: 18 }, rpcUrls: { default: { http: [url] } } });
const pub = createPublicClient({ chain, transport: http(url) });
const alice = privateKeyToAccount(env('ALICE_KEY'));
const carol = privateKeyToAccount(env('CAROL_KEY'));
const aliceW = createWalletClient({ account: alice, chain, transport: http(url) });
const carolW = createWalletClient({ account: carol, chain, transport: http(url) });
const token = env('TOKEN');
const bob = env('BOB');
const erc20 = parseAbi([
  'function decimals() view returns (uint8)',
  'function balanceOf(address) view returns (uint256)',
  'function transfer(address,uint256) returns (bool)',
  'function transferWithTravelRule(address to, uint256 amount, bytes payload) returns (bool)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
const compiled = JSON.parse(execFileSync(process.execPath, [path.join(here, 'compile.mjs')], { encoding: 'utf8' }));
const out = {};

assert.equal(await pub.getChainId(), 852);

// 1. A contract deploys, runs, logs, and is read back.
const counterHash = await aliceW.deployContract({ abi: compiled.Counter.abi, bytecode: compiled.Counter.bytecode });
const counterRcpt = await pub.waitForTransactionReceipt({ hash: counterHash, pollingInterval: 100, timeout: 30_000 });
assert.equal(counterRcpt.status, 'success');
const counter = counterRcpt.contractAddress;
assert.ok(counter, 'contractAddress');
assert.ok((await pub.getCode({ address: counter })).length > 2, 'code stored');
const incHash = await aliceW.writeContract({ address: counter, abi: compiled.Counter.abi, functionName: 'inc' });
const incRcpt = await pub.waitForTransactionReceipt({ hash: incHash, pollingInterval: 100, timeout: 30_000 });
assert.equal(incRcpt.status, 'success');
const counted = decodeEventLog({ abi: compiled.Counter.abi, ...incRcpt.logs[0] });
assert.equal(counted.eventName, 'Counted');
assert.equal(counted.args.by.toLowerCase(), alice.address.toLowerCase());
assert.equal(await pub.readContract({ address: counter, abi: compiled.Counter.abi, functionName: 'n' }), 1n);
const logs = await pub.getLogs({ address: counter, fromBlock: 1n, toBlock: 'latest' });
assert.equal(logs.length, 1);

// 2. The precompile's reads.
assert.equal(await pub.readContract({ address: token, abi: erc20, functionName: 'decimals' }), 2);
const aliceBefore = await pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [alice.address] });
const bobBefore = await pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [bob] });
out.alice_before = aliceBefore.toString();

// 3. transfer() reverts with the reason.
try {
  await pub.simulateContract({ account: alice, address: token, abi: erc20, functionName: 'transfer', args: [bob, 5n] });
  assert.fail('transfer must revert');
} catch (e) {
  assert.ok(e instanceof BaseError);
  const revert = e.walk((x) => x instanceof ContractFunctionRevertedError);
  assert.ok(revert, String(e));
  assert.match(revert.reason, /transferWithTravelRule/);
}

// 4. transferWithTravelRule: status success, a Transfer log, balances move.
const good = await aliceW.writeContract({ address: token, abi: erc20, functionName: 'transferWithTravelRule', args: [bob, 250n, env('PAYLOAD_ALICE_BOB')] });
const goodRcpt = await pub.waitForTransactionReceipt({ hash: good, pollingInterval: 100, timeout: 30_000 });
assert.equal(goodRcpt.status, 'success');
const tlog = decodeEventLog({ abi: erc20, ...goodRcpt.logs[0] });
assert.equal(tlog.eventName, 'Transfer');
assert.equal(tlog.args.value, 250n);
assert.equal(await pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [bob] }), bobBefore + 250n);
out.good = good;

// 5. A gated one (recipient without identity), sent with an explicit gas limit (an estimate
// would already fail): mined, status reverted.
const carolAddr = carol.address;
const gated = await aliceW.writeContract({ address: token, abi: erc20, functionName: 'transferWithTravelRule', args: [carolAddr, 7n, env('PAYLOAD_ALICE_BOB')], gas: 300_000n });
const gatedRcpt = await pub.waitForTransactionReceipt({ hash: gated, pollingInterval: 100, timeout: 30_000 });
assert.equal(gatedRcpt.status, 'reverted');
out.gated = gated;

// 6. An intermediary contract (carol's first deployment, enrolled and funded by the test).
const interHash = await carolW.deployContract({ abi: compiled.Intermediary.abi, bytecode: compiled.Intermediary.bytecode });
const interRcpt = await pub.waitForTransactionReceipt({ hash: interHash, pollingInterval: 100, timeout: 30_000 });
assert.equal(interRcpt.status, 'success');
const inter = interRcpt.contractAddress;
assert.equal(inter.toLowerCase(), env('INTERMEDIARY').toLowerCase());
const pI = env('PAYLOAD_INTERMEDIARY_BOB');
const bal = (a) => pub.readContract({ address: token, abi: erc20, functionName: 'balanceOf', args: [a] });
const interStart = await bal(inter);
const bobMid = await bal(bob);
// It pays from its own balance.
const paid = await aliceW.writeContract({ address: inter, abi: compiled.Intermediary.abi, functionName: 'pay', args: [token, bob, 100n, pI], gas: 500_000n });
assert.equal((await pub.waitForTransactionReceipt({ hash: paid, pollingInterval: 100, timeout: 30_000 })).status, 'success');
assert.equal(await bal(inter), interStart - 100n);
assert.equal(await bal(bob), bobMid + 100n);
assert.equal(await bal(alice.address), aliceBefore - 250n, 'the caller of the intermediary pays nothing');
out.intermediary_paid = paid;
// A payment whose frame reverts, caught by the caller which carries on: undone entirely.
const tried = await aliceW.writeContract({ address: inter, abi: compiled.Intermediary.abi, functionName: 'tryPay', args: [token, bob, 60n, pI], gas: 600_000n });
const triedRcpt = await pub.waitForTransactionReceipt({ hash: tried, pollingInterval: 100, timeout: 30_000 });
assert.equal(triedRcpt.status, 'success');
const caught = decodeEventLog({ abi: compiled.Intermediary.abi, ...triedRcpt.logs[triedRcpt.logs.length - 1] });
assert.equal(caught.eventName, 'Caught');
assert.equal(caught.args.ok, false);
assert.equal(await bal(inter), interStart - 100n, 'the caught payment is undone');
assert.equal(await bal(bob), bobMid + 100n);
out.intermediary_tried = tried;
// DELEGATECALL and STATICCALL into the state-changing method fail; a static view works.
assert.equal((await pub.simulateContract({ account: alice, address: inter, abi: compiled.Intermediary.abi, functionName: 'viaDelegatecall', args: [token, bob, 1n, pI] })).result, false);
assert.equal(await pub.readContract({ address: inter, abi: compiled.Intermediary.abi, functionName: 'viaStaticcall', args: [token, bob, 1n, pI] }), false);
assert.equal(await pub.readContract({ address: inter, abi: compiled.Intermediary.abi, functionName: 'decimalsOf', args: [token] }), 2);
out.intermediary = inter;

console.log(JSON.stringify(out));
