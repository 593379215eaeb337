// CosmJS (what Keplr and most Cosmos web apps use) against a Lantau node's CometBFT RPC:
// accounts and balances read through abci_query with gRPC method paths (StargateClient and a
// QueryClient with the bank extension), then a MsgSend and a gated stablecoin transfer (with
// its Travel Rule extension option) signed with an eth_secp256k1 key (SIGN_MODE_DIRECT over
// keccak256 of the sign doc, the key type the chain fixes) and broadcast with StargateClient,
// which polls the node until they are included. A transfer the gates refuse comes back with
// the compliance codespace. Prints one JSON line with what it saw.
//
// Env: RPC_URL, ALICE_KEY (hex), BOB, ISSUER, NOBODY (bech32), PAYLOAD_TYPE_URL and
// PAYLOAD_HEX (the Travel Rule payload alice -> issuer), PAYLOAD_NOBODY_HEX.

import assert from 'node:assert/strict';
import { StargateClient, QueryClient, setupBankExtension, setupAuthExtension } from '@cosmjs/stargate';
import { connectComet } from '@cosmjs/tendermint-rpc';
import { Registry, makeAuthInfoBytes, makeSignDoc, makeSignBytes } from '@cosmjs/proto-signing';
import { Bip39, EnglishMnemonic, Slip10, Slip10Curve, stringToPath, Secp256k1, keccak256 } from '@cosmjs/crypto';
import { fromHex, toBech32 } from '@cosmjs/encoding';
import { TxRaw } from 'cosmjs-types/cosmos/tx/v1beta1/tx';
import { BaseAccount } from 'cosmjs-types/cosmos/auth/v1beta1/auth';
import { SignMode } from 'cosmjs-types/cosmos/tx/signing/v1beta1/signing';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`missing env ${k}`);
  return v;
};
const rpc = env('RPC_URL');
const out = { ms: {} };
const t0 = Date.now();
const mark = (label) => { out.ms[label] = Date.now() - t0; };

// --- an eth_secp256k1 signer -------------------------------------------------------------
// The address is the last 20 bytes of keccak256 of the uncompressed public key (without its
// 0x04 prefix), in bech32 with the chain's prefix; the public key travels as a
// /cosmos.evm.crypto.v1.ethsecp256k1.PubKey (field 1: the 33-byte compressed key).
const priv = fromHex(env('ALICE_KEY').replace(/^0x/, ''));
// The same key from the mnemonic, on Ethereum's HD path (coin type 60; docs/cosmjs.md).
if (process.env.MNEMONIC) {
  const seed = await Bip39.mnemonicToSeed(new EnglishMnemonic(process.env.MNEMONIC));
  const { privkey } = Slip10.derivePath(Slip10Curve.Secp256k1, seed, stringToPath(env('HD_PATH')));
  assert.deepEqual(privkey, priv, 'the mnemonic on m/44\'/60\'/0\'/0/i gives the account\'s key');
}
const keypair = await Secp256k1.makeKeypair(priv);
const compressed = Secp256k1.compressPubkey(keypair.pubkey);
const address = toBech32('lantau', keccak256(keypair.pubkey.slice(1)).slice(12));
const pubkeyAny = {
  typeUrl: '/cosmos.evm.crypto.v1.ethsecp256k1.PubKey',
  value: Uint8Array.from([0x0a, compressed.length, ...compressed]),
};
async function signDirect(bodyBytes, authInfoBytes, chainId, accountNumber) {
  const doc = makeSignDoc(bodyBytes, authInfoBytes, chainId, accountNumber);
  const sig = await Secp256k1.createSignature(keccak256(makeSignBytes(doc)), priv);
  return TxRaw.encode({ bodyBytes, authInfoBytes, signatures: [Uint8Array.from([...sig.r(32), ...sig.s(32)])] }).finish();
}

// Accounts are BaseAccounts whose key CosmJS's default parser does not know (as on every
// Ethermint-family chain): a parser that reads the BaseAccount and leaves the key aside.
const accountParser = (any) => {
  assert.equal(any.typeUrl, '/cosmos.auth.v1beta1.BaseAccount');
  const b = BaseAccount.decode(any.value);
  return { address: b.address, pubkey: null, accountNumber: Number(b.accountNumber), sequence: Number(b.sequence) };
};

// --- reads ---------------------------------------------------------------------------------
const client = await StargateClient.connect(rpc, { accountParser });
mark('connected');
const chainId = await client.getChainId();
out.chain_id = chainId;
assert.ok((await client.getHeight()) >= 1);
const acct = await client.getAccount(address);
assert.ok(acct, `account ${address}`);
assert.equal(acct.address, address);
out.account_number = acct.accountNumber;
const native = await client.getBalance(address, 'alantau');
assert.ok(BigInt(native.amount) > 0n, 'alice has native coin');
const all = await client.getAllBalances(address);
assert.ok(all.some((c) => c.denom === 'hkd.demo' && BigInt(c.amount) > 0n), JSON.stringify(all));
assert.equal(await client.getAccount(toBech32('lantau', new Uint8Array(20).fill(9))), null, 'an unknown account is null');

mark('reads');
const comet = await connectComet(rpc);
const q = QueryClient.withExtensions(comet, setupBankExtension, setupAuthExtension);
const supply = await q.bank.supplyOf('hkd.demo');
assert.ok(BigInt(supply.amount) > 0n);
const metas = await q.bank.denomsMetadata();
const hkd = metas.find((m) => m.base === 'hkd.demo');
assert.ok(hkd, JSON.stringify(metas));
assert.ok(hkd.denomUnits.some((u) => u.exponent === 2), 'HKD has two decimals');
const viaAuth = await q.auth.account(address);
assert.equal(viaAuth.typeUrl, '/cosmos.auth.v1beta1.BaseAccount');

// --- transactions --------------------------------------------------------------------------
mark('queries');
const registry = new Registry();
let sequence = acct.sequence;
async function send(coins, to, extensionOptions, gas) {
  const bodyBytes = registry.encodeTxBody({
    messages: [{ typeUrl: '/cosmos.bank.v1beta1.MsgSend', value: { fromAddress: address, toAddress: to, amount: coins } }],
    memo: 'cosmjs',
    extensionOptions,
  });
  // The floor: 1 gwei (1e9 alantau) per unit of gas.
  const fee = [{ denom: 'alantau', amount: (BigInt(gas) * 1_000_000_000n).toString() }];
  const authInfoBytes = makeAuthInfoBytes([{ pubkey: pubkeyAny, sequence }], fee, gas, undefined, undefined, SignMode.SIGN_MODE_DIRECT);
  return signDirect(bodyBytes, authInfoBytes, chainId, acct.accountNumber);
}

const bob = env('BOB');
const bobBefore = BigInt((await client.getBalance(bob, 'alantau')).amount);
const r1 = await client.broadcastTx(await send([{ denom: 'alantau', amount: '777' }], bob, [], 200000), 30_000, 200);
assert.equal(r1.code, 0, r1.rawLog);
sequence += 1;
assert.equal(BigInt((await client.getBalance(bob, 'alantau')).amount), bobBefore + 777n);
out.send = r1.transactionHash;
mark('send');

const payload = { typeUrl: env('PAYLOAD_TYPE_URL'), value: fromHex(env('PAYLOAD_HEX')) };
const issuer = env('ISSUER');
const hkdBefore = BigInt((await client.getBalance(issuer, 'hkd.demo')).amount);
const r2 = await client.broadcastTx(await send([{ denom: 'hkd.demo', amount: '1250' }], issuer, [payload], 400000), 30_000, 200);
assert.equal(r2.code, 0, r2.rawLog);
sequence += 1;
assert.equal(BigInt((await client.getBalance(issuer, 'hkd.demo')).amount), hkdBefore + 1250n);
out.transfer = r2.transactionHash;
mark('transfer');
const got = await client.getTx(r2.transactionHash);
assert.ok(got && got.code === 0 && got.height === r2.height);
assert.ok(got.events.some((e) => e.type === 'transfer'));
const found = await client.searchTx(`message.sender='${address}'`);
assert.ok(found.some((t) => t.hash === r2.transactionHash), 'searchTx finds the transfer');

mark('search');
// A transfer the gates refuse (the recipient has no identity): refused at CheckTx.
const nobodyPayload = { typeUrl: env('PAYLOAD_TYPE_URL'), value: fromHex(env('PAYLOAD_NOBODY_HEX')) };
await assert.rejects(
  client.broadcastTx(await send([{ denom: 'hkd.demo', amount: '5' }], env('NOBODY'), [nobodyPayload], 400000), 30_000, 200),
  (e) => {
    out.refused = { code: e.code, codespace: e.codespace, log: e.log };
    return e.codespace === 'compliance' && e.code > 0;
  },
);
client.disconnect();
comet.disconnect();
console.log(JSON.stringify(out));
// Keep-alive sockets of the HTTP client would hold the process open for their idle timeout.
process.exit(0);
