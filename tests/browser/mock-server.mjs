#!/usr/bin/env node
// A development stand-in for the two Rust web servers and the node's Ethereum JSON-RPC, with fake
// data, following docs/web-api.md: develop and screenshot the pages without a chain. Serves the
// real files of crates/web/assets. A dev tool, not part of CI.
//
//   node mock-server.mjs [--port-base 18080]
//     portal           http://127.0.0.1:18080/        (auto-approve on; faucet window 60 s)
//     the desk         http://127.0.0.1:18081/        (sign in with REVIEWER_KEY or OFFICER_KEY in a wallet)
//     EVM JSON-RPC     http://127.0.0.1:18083/       (chain id 852; signatures really verified)
//
// It prints `export NAME=value` lines that e2e.mjs reads (PORTAL_URL, EVM_RPC_URL, RECIPIENT,
// NEWCOMER_KEY, DESK_URL, REVIEWER_KEY, OFFICER_KEY, FLAG_TX_HASH), so both phases run
// against it:  node mock-server.mjs --write-env /tmp/mock.env &  then  . /tmp/mock.env; node e2e.mjs onboarding

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { verifyMessage, parseTransaction, recoverTransactionAddress, keccak256, getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const here = path.dirname(fileURLToPath(import.meta.url));
const ASSETS = path.resolve(here, '../../crates/web/assets');
const argv = process.argv.slice(2);
const base = Number(argv.includes('--port-base') ? argv[argv.indexOf('--port-base') + 1] : 18080);
const PORTS = { portal: base, desk: base + 1, evm: base + 3 };
const WINDOW_SECS = 60;
const HKD = 'hkd.demo';
const TOKEN_ADDRESS = '0x0000000000000000000000000000000000000900';
const GAS_PRICE = 1_000_000_000n;

// ---- bech32 (BIP-173), for lantau1… addresses -----------------------------------------------
const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
function polymod(values) {
  const G = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const b = chk >> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((b >> i) & 1) chk ^= G[i];
  }
  return chk;
}
const hrpExpand = (hrp) => [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
function convertBits(data, from, to, pad) {
  let acc = 0, bits = 0; const out = []; const maxv = (1 << to) - 1;
  for (const v of data) { acc = (acc << from) | v; bits += from; while (bits >= to) { bits -= to; out.push((acc >> bits) & maxv); } }
  if (pad && bits > 0) out.push((acc << (to - bits)) & maxv);
  return out;
}
function toBech32(hex, hrp = 'lantau') {
  const data = convertBits(Buffer.from(hex.slice(2), 'hex'), 8, 5, true);
  const mod = polymod([...hrpExpand(hrp), ...data, 0, 0, 0, 0, 0, 0]) ^ 1;
  const chk = [0, 1, 2, 3, 4, 5].map((i) => (mod >> (5 * (5 - i))) & 31);
  return `${hrp}1${[...data, ...chk].map((d) => CHARSET[d]).join('')}`;
}
function fromBech32(s) {
  const m = /^lantau1([02-9ac-hj-np-z]+)$/.exec(s);
  if (!m) return null;
  const data = [...m[1]].map((c) => CHARSET.indexOf(c));
  if (polymod([...hrpExpand('lantau'), ...data]) !== 1) return null;
  const bytes = convertBits(data.slice(0, -6), 5, 8, false);
  if (bytes.length !== 20) return null;
  return '0x' + Buffer.from(bytes).toString('hex');
}
// Any address form → lower-case 0x hex, or null.
function parseAddr(a) {
  if (typeof a !== 'string') return null;
  if (/^0x[0-9a-fA-F]{40}$/.test(a)) return a.toLowerCase();
  return fromBech32(a);
}

// ---- state ------------------------------------------------------------------------------------
const now = () => Date.now();
const iso = (t) => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
const hex32 = () => crypto.randomBytes(32).toString('hex').toUpperCase();
const sha256 = (s) => crypto.createHash('sha256').update(s).digest('hex');

const accounts = new Map(); // hex → {native, hkd, identity, nonce}
function acct(hex) {
  if (!accounts.has(hex)) accounts.set(hex, { native: 0n, hkd: 0n, identity: null, nonce: 0 });
  return accounts.get(hex);
}
const applications = []; // {id, hex, status, level, ivms101_off_chain_ref, tx_hash, created_at, decided_at, reason, person}
const challenges = new Map(); // nonce → {hex, message, expires, used}
const limits = new Map(); // `${faucet}:${hex}` → until (ms)
let height = 1000;

const newcomerKey = generatePrivateKey();
const recipient = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
acct(recipient).identity = { level: 'LEVEL_RETAIL_BASIC', vasp_identifier: '', ivms101_off_chain_ref: 'ivms101:sha256:' + sha256('recipient') };
acct(recipient).hkd = 50000n;

// Console data: flags and audit rows over the past 8 days, deterministic.
const people = Array.from({ length: 9 }, (_, i) => toBech32('0x' + sha256(`person-${i}`).slice(0, 40)));
const issuerAddr = toBech32('0x' + sha256('issuer').slice(0, 40));
// The desk's two people: their wallets' keys (the e2e test signs in with them).
const reviewerKey = generatePrivateKey();
const officerKey = generatePrivateKey();
const reviewerAddr = toBech32(privateKeyToAccount(reviewerKey).address);
const officerAddr = toBech32(privateKeyToAccount(officerKey).address);
const authorityAddr = toBech32('0x' + sha256('authority').slice(0, 40));
const vasps = ['VASP-HARBOUR-EXCHANGE', 'VASP-KOWLOON-PAY', ''];
const identities = new Map(people.map((p, i) => [p, {
  address: p, level: i % 3 === 0 ? 'LEVEL_RETAIL_PLUS' : 'LEVEL_RETAIL_BASIC', vasp_identifier: vasps[i % 3],
  ivms101_off_chain_ref: `ivms101:sha256:${sha256(p)}`, enrolled_at: iso(now() - 20 * 86400e3), last_level_change: iso(now() - 20 * 86400e3),
}]));
const flags = [];
const audit = [];
const notes = new Map(); // flag id → [{author, at, text, hash, attachments}]
const attachments = new Map(); // sha256 → bytes
const traces = new Map(); // tx hash → trace
let seq = 0;
function addAudit(e) {
  audit.push({ sequence: String(++seq), block_height: String(e.height ?? ++height), block_time: iso(e.t ?? now()), tx_type: e.tx_type,
    subject: e.subject || '', counterparty: e.counterparty || '', ...(e.amount ? { amount: { denom: e.denom || HKD, amount: String(e.amount) } } : {}),
    tx_hash: e.tx_hash || hex32(), metadata: e.metadata || {} });
}
function gateRows(amount, velocity) {
  return [
    ['kyc_gate', true, 'neither party is blacklisted', 'DECORATOR_RESULT_PASS'],
    ['sanctions_gate', true, "no party's VASP is on the sanctions list", 'DECORATOR_RESULT_PASS'],
    ['travel_rule_gate', true, 'payload present; references and VASP identifiers match the registry', 'DECORATOR_RESULT_PASS'],
    ['travel_rule_tier_gate', true, "payload tier equals the sender's registered tier, and the sender may originate this amount", 'DECORATOR_RESULT_PASS'],
    ['role_gate', true, 'the sender is not a bound sub-key', 'DECORATOR_RESULT_PASS'],
    ['threshold_gate', false, amount >= 800000 ? `large transfer flagged for review: ${amount} ${HKD} ≥ 800000` : `below the threshold 800000`, amount >= 800000 ? 'DECORATOR_RESULT_FLAGGED' : 'DECORATOR_RESULT_PASS'],
    ['velocity_gate', false, velocity ? 'velocity limit reached: 10 transfers within 60s' : 'fewer than 10 transfers within 60s', velocity ? 'DECORATOR_RESULT_FLAGGED' : 'DECORATOR_RESULT_PASS'],
  ].map(([name, blocking, reason, status], i) => ({ name, status, blocking, reason, gas_used: String([6785, 1060, 0, 0, 1165, 0, 1204][i]) }));
}
function addFlag({ t, subject, counterparty, amount, decorator, status = 'FLAG_STATUS_EMITTED', resolvedAfter, tx_hash = hex32() }) {
  const id = String(flags.length + 1);
  const vasp = decorator === 'threshold' ? identities.get(subject)?.vasp_identifier || '' : '';
  const h = ++height;
  addAudit({ t, height: h, tx_type: 'transfer', subject, counterparty, amount, tx_hash });
  addAudit({ t, height: h, tx_type: `${decorator}_flag`, subject, counterparty, amount, tx_hash, metadata: { decorator, flag_id: id } });
  const f = { flag_id: id, status: 'FLAG_STATUS_EMITTED', decorator, subject, counterparty, amount: { denom: HKD, amount: String(amount) }, vasp,
    tx_hash, block_height: String(h), created_at: iso(t), updated_at: iso(t), resolution: '', reviewer: '', officer: '', evidence_hash: '', officer_note_hash: '' };
  flags.push(f);
  if (status !== 'FLAG_STATUS_EMITTED') {
    const t2 = t + (resolvedAfter ?? 3600e3);
    f.updated_at = iso(t2);
    if (status === 'FLAG_STATUS_PENDING_OFFICER') {
      f.status = status; f.reviewer = reviewerAddr; f.officer_note_hash = sha256('note');
      addAudit({ t: t2, tx_type: 'flag_escalate', subject, counterparty, amount, metadata: { flag_id: id, decorator, reviewer: reviewerAddr, status } });
    } else {
      f.status = status; f.resolution = status.endsWith('BLOCKED') ? 'BLOCKED' : 'APPROVED'; f.reviewer = reviewerAddr; f.evidence_hash = sha256('ev');
      addAudit({ t: t2, tx_type: 'flag_review', subject, counterparty, amount, metadata: { flag_id: id, decorator, reviewer: reviewerAddr, decision: f.resolution, status } });
      if (f.resolution === 'BLOCKED') addAudit({ t: t2, tx_type: 'blacklist', subject, metadata: { evidence_ref: `flag/${id}`, previous_level: identities.get(subject)?.level || '', reason: 'flag_blocked' } });
    }
  }
  traces.set(tx_hash, { tx_hash, accepted: true, results: gateRows(amount, decorator === 'velocity') });
  return f;
}
(function seed() {
  let r = 7;
  const rnd = () => ((r = (r * 1103515245 + 12345) % 2147483648) / 2147483648);
  const t0 = now() - 8 * 86400e3;
  for (const p of people) addAudit({ t: t0 - 12 * 86400e3, tx_type: 'identity_enrolled', subject: p, metadata: { level: identities.get(p).level } });
  addAudit({ t: t0 - 10 * 86400e3, tx_type: 'mint', subject: issuerAddr, counterparty: people[0], amount: 50000000 });
  for (let i = 0; i < 220; i++) {
    const t = t0 + rnd() * 8 * 86400e3;
    const a = people[Math.floor(rnd() * people.length)], b = people[Math.floor(rnd() * people.length)];
    addAudit({ t, tx_type: 'transfer', subject: a, counterparty: b, amount: Math.floor(rnd() * 300000) + 100 });
  }
  for (let i = 0; i < 26; i++) {
    const t = t0 + rnd() * 7.5 * 86400e3;
    const s = people[i % people.length];
    const st = rnd();
    addFlag({ t, subject: s, counterparty: people[(i + 3) % people.length], amount: i % 4 === 3 ? 1500 : 800000 + Math.floor(rnd() * 900000),
      decorator: i % 4 === 3 ? 'velocity' : 'threshold',
      status: st < 0.35 ? 'FLAG_STATUS_EMITTED' : st < 0.5 ? 'FLAG_STATUS_PENDING_OFFICER' : st < 0.85 ? 'FLAG_STATUS_RESOLVED_APPROVED' : 'FLAG_STATUS_RESOLVED_BLOCKED',
      resolvedAfter: (0.2 + rnd() * 20) * 3600e3 });
  }
  // A burst by one subject: near the velocity limit.
  for (let i = 0; i < 9; i++) addAudit({ t: now() - 3 * 3600e3 + i * 4000, tx_type: 'transfer', subject: people[4], counterparty: people[5], amount: 1000 });
  addAudit({ t: now() - 5 * 86400e3, tx_type: 'sanctions_update', subject: authorityAddr, metadata: { reason: 'sanctions_list_push', evidence_ref: 'ofac-2026-11', added: 'VASP-SHADY' } });
  addAudit({ t: now() - 2 * 86400e3, tx_type: 'rule_update', subject: authorityAddr, metadata: { travel_rule_full_threshold: '800000', velocity_tx_limit: '10', velocity_window_seconds: '60' } });
  addAudit({ t: now() - 3 * 86400e3, tx_type: 'freeze', subject: people[7], metadata: { reason: 'court order' } });
  addAudit({ t: now() - 1.5 * 86400e3, tx_type: 'level_change', subject: people[2], metadata: { previous_level: 'LEVEL_RETAIL_BASIC', level: 'LEVEL_RETAIL_PLUS' } });
  addAudit({ t: now() - 1 * 86400e3, tx_type: 'pause', subject: issuerAddr, metadata: { reason: 'drill' } });
  audit.sort((x, y) => x.block_time.localeCompare(y.block_time));
  audit.forEach((e, i) => { e.sequence = String(i + 1); });
  seq = audit.length;
})();
// The flag the review phase works: fresh, EMITTED, with its trace held by the node.
const FLAG = addFlag({ t: now() - 95e3, subject: people[0], counterparty: issuerAddr, amount: 900000, decorator: 'threshold' });

// ---- HTTP plumbing ------------------------------------------------------------------------------
const MIME = { '.js': 'text/javascript', '.css': 'text/css', '.html': 'text/html; charset=utf-8', '.json': 'application/json', '.txt': 'text/plain' };
function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', ...headers });
  res.end(JSON.stringify(body));
}
const fail = (res, status, code, message, extra = {}, headers = {}) => send(res, status, { code, message, ...extra }, headers);
function asset(res, rel) {
  const p = path.resolve(ASSETS, rel);
  if (!p.startsWith(ASSETS + path.sep) || !fs.existsSync(p) || !fs.statSync(p).isFile()) return fail(res, 404, 'not_found', `no asset ${rel}`);
  res.writeHead(200, { 'Content-Type': MIME[path.extname(p)] || 'application/octet-stream', 'Cache-Control': 'no-cache' });
  fs.createReadStream(p).pipe(res);
}
async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    const v = JSON.parse(text || 'null');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : undefined;
  } catch { return undefined; }
}
const malformed = (res, why) => fail(res, 400, 'malformed_body', `the body must be a JSON object as docs/web-api.md shows: ${why}`);
const badAddr = (res, a) => fail(res, 400, 'invalid_address', `${JSON.stringify(a)} is not an address (bech32 lantau1… or 0x + 40 hex digits)`);
const slow = (ms) => new Promise((r) => setTimeout(r, ms)); // a block's inclusion, roughly

// ---- portal -------------------------------------------------------------------------------------
function config() {
  return { chain_id: 'lantau-mock-1', evm_chain_id: 852, evm_chain_id_hex: '0x354', chain_name: 'Lantau mock', evm_rpc_url: `http://127.0.0.1:${PORTS.evm}`,
    domain: `127.0.0.1:${PORTS.portal}`, native: { symbol: 'LANTAU', denom: 'alantau', decimals: 18, faucet_amount: '10000000000000000000' },
    hkd: { denom: HKD, display: 'HKD', decimals: 2, faucet_amount: '100000', token_address: TOKEN_ADDRESS }, kyc_level: 'LEVEL_RETAIL_BASIC', auto_approve: true,
    faucet_window_secs: WINDOW_SECS };
}
const pubApp = (a) => a && ({ id: a.id, address: toBech32(a.hex), hex_address: getAddress(a.hex), status: a.status, level: a.level, ivms101_off_chain_ref: a.ivms101_off_chain_ref,
  tx_hash: a.tx_hash, created_at: a.created_at, decided_at: a.decided_at, reason: a.reason });
function siwe(hex, nonce, issued, expires) {
  return `127.0.0.1:${PORTS.portal} wants you to sign in with your Ethereum account:\n${getAddress(hex)}\n\n` +
    `Apply for an identity on Lantau mock: I control this address.\n\nURI: http://127.0.0.1:${PORTS.portal}\nVersion: 1\nChain ID: 852\n` +
    `Nonce: ${nonce}\nIssued At: ${issued}\nExpiration Time: ${expires}`;
}

async function portal(req, res, url) {
  const p = url.pathname;
  if (req.method === 'GET' && p === '/') return asset(res, 'portal/index.html');
  if (req.method === 'GET' && p.startsWith('/assets/')) return asset(res, p.slice(8));
  if (req.method === 'GET' && p === '/api/config') return send(res, 200, config());
  let m;
  if (req.method === 'GET' && (m = /^\/api\/account\/([^/]+)$/.exec(p))) {
    const hex = parseAddr(decodeURIComponent(m[1]));
    if (!hex) return badAddr(res, m[1]);
    const a = acct(hex);
    const application = applications.filter((x) => x.hex === hex).at(-1);
    return send(res, 200, { address: toBech32(hex), hex_address: getAddress(hex), native_balance: a.native.toString(), hkd_balance: a.hkd.toString(),
      identity: a.identity, application: pubApp(application) || null });
  }
  if (req.method === 'GET' && (m = /^\/kyc\/applications\/([^/]+)$/.exec(p))) {
    const hex = parseAddr(decodeURIComponent(m[1]));
    if (!hex) return badAddr(res, m[1]);
    const a = applications.filter((x) => x.hex === hex).at(-1);
    return a ? send(res, 200, { application: pubApp(a) }) : fail(res, 404, 'not_found', 'no such application');
  }
  if (req.method !== 'POST') return fail(res, 404, 'not_found', 'no such route (docs/web-api.md lists the portal\'s)');
  const body = await readBody(req);
  if (!body) return malformed(res, 'not a JSON object');
  if (p === '/faucet/native' || p === '/faucet/hkd') {
    if (typeof body.address !== 'string') return malformed(res, 'missing field `address`');
    const hex = parseAddr(body.address);
    if (!hex) return badAddr(res, body.address);
    const kind = p.endsWith('native') ? 'native' : 'hkd';
    if (kind === 'hkd' && !acct(hex).identity) return fail(res, 403, 'no_identity', `${toBech32(hex)} has no identity record: HKD goes only to identified addresses; apply for an identity first`);
    const until = limits.get(`${kind}:${hex}`) || 0;
    if (until > now()) {
      const secs = Math.max(1, Math.ceil((until - now()) / 1000));
      return fail(res, 429, 'rate_limited', `this address already had what this faucet gives per ${WINDOW_SECS} s: try again in ${secs} s`, { retry_after_secs: secs }, { 'Retry-After': String(secs) });
    }
    limits.set(`${kind}:${hex}`, now() + WINDOW_SECS * 1000);
    await slow(600);
    const a = acct(hex);
    const amount = kind === 'native' ? 10n ** 19n : 100000n;
    if (kind === 'native') a.native += amount; else a.hkd += amount;
    const h = ++height;
    addAudit({ tx_type: kind === 'native' ? 'faucet' : 'mint', subject: issuerAddr, counterparty: toBech32(hex), ...(kind === 'hkd' ? { amount: Number(amount) } : {}) });
    return send(res, 200, { tx_hash: hex32(), height: String(h), address: toBech32(hex), hex_address: getAddress(hex), denom: kind === 'native' ? 'alantau' : HKD,
      amount: amount.toString(), balance: (kind === 'native' ? a.native : a.hkd).toString() });
  }
  if (p === '/kyc/challenge') {
    const hex = parseAddr(body.address);
    if (!hex) return badAddr(res, body.address);
    const nonce = crypto.randomBytes(8).toString('hex');
    const issued = iso(now()), expires = iso(now() + 300e3);
    const message = siwe(hex, nonce, issued, expires);
    challenges.set(nonce, { hex, message, expires: now() + 300e3, used: false });
    return send(res, 200, { nonce, message, issued_at: issued, expires_at: expires });
  }
  if (p === '/kyc/apply') {
    if (typeof body.message !== 'string' || typeof body.signature !== 'string' || !body.person || typeof body.person !== 'object') return malformed(res, 'message, signature and person are required');
    const nonce = /\nNonce: (\S+)\n/.exec(body.message)?.[1];
    const ch = nonce && challenges.get(nonce);
    if (!ch || ch.message !== body.message) return fail(res, 404, 'not_found', 'no such challenge: ask for a new one');
    if (ch.used) return fail(res, 409, 'challenge_used', 'this challenge was used already: ask for a new one');
    if (ch.expires < now()) return fail(res, 410, 'challenge_expired', 'the challenge expired: ask for a new one');
    let ok = false;
    try { ok = await verifyMessage({ address: getAddress(ch.hex), message: body.message, signature: body.signature }); } catch { ok = false; }
    if (!ok) return fail(res, 401, 'bad_signature', `the signature does not recover ${getAddress(ch.hex)}`);
    const per = body.person;
    for (const k of ['given_name', 'family_name', 'date_of_birth', 'country_of_residence', 'national_identifier', 'national_identifier_type']) {
      if (typeof per[k] !== 'string') return malformed(res, `person.${k} missing`);
    }
    if (!/^\d{4}-\d{2}-\d{2}$/.test(per.date_of_birth) || new Date(per.date_of_birth) > new Date()) return fail(res, 400, 'invalid_request', 'date_of_birth must be a past date, YYYY-MM-DD');
    if (!/^[A-Z]{2}$/.test(per.country_of_residence)) return fail(res, 400, 'invalid_request', 'country_of_residence must be an ISO 3166 alpha-2 code');
    ch.used = true;
    if (acct(ch.hex).identity || applications.some((a) => a.hex === ch.hex && (a.status === 'pending' || a.status === 'enrolled'))) {
      return fail(res, 409, 'already_applied', `${toBech32(ch.hex)} already has an application or an identity`);
    }
    await slow(800);
    const ref = `ivms101:sha256:${sha256(JSON.stringify(per) + ch.hex)}`;
    const a = { id: String(applications.length + 1), hex: ch.hex, status: 'enrolled', level: 'LEVEL_RETAIL_BASIC', ivms101_off_chain_ref: ref, tx_hash: hex32(),
      created_at: iso(now()), decided_at: iso(now()), reason: null, person: per };
    applications.push(a);
    acct(ch.hex).identity = { level: 'LEVEL_RETAIL_BASIC', vasp_identifier: '', ivms101_off_chain_ref: ref };
    addAudit({ tx_type: 'identity_enrolled', subject: toBech32(ch.hex), metadata: { level: 'LEVEL_RETAIL_BASIC' } });
    return send(res, 201, { application: pubApp(a) });
  }
  if (p === '/api/transfer/prepare') {
    const from = parseAddr(body.from), to = parseAddr(body.to);
    if (!from) return badAddr(res, body.from);
    if (!to) return badAddr(res, body.to);
    if (typeof body.amount !== 'string' || !/^\d+$/.test(body.amount)) return fail(res, 400, 'invalid_request', 'amount: HKD cents as a decimal string');
    const fi = acct(from).identity, ti = acct(to).identity;
    if (!fi) return fail(res, 403, 'no_identity', `${toBech32(from)} has no identity record: a Travel Rule payload needs one`);
    const payload = { originator_ref: fi.ivms101_off_chain_ref, beneficiary_ref: ti ? ti.ivms101_off_chain_ref : '', originator_vasp: fi.vasp_identifier,
      beneficiary_vasp: ti ? ti.vasp_identifier : '', tier: 'minimal' };
    const pb = protoPayload(payload);
    const word = (v) => BigInt(v).toString(16).padStart(64, '0');
    const data = '0x23ec66fc' + to.slice(2).padStart(64, '0') + word(body.amount) + word(0x60) + word(pb.length) + pb.toString('hex').padEnd(Math.ceil(pb.length / 32) * 64, '0');
    return send(res, 200, { to: TOKEN_ADDRESS, data, gas: '0x30d40', payload });
  }
  return fail(res, 404, 'not_found', 'no such route');
}
function protoPayload(p) {
  const parts = [];
  [[2, p.originator_ref], [3, p.beneficiary_ref], [4, p.originator_vasp], [5, p.beneficiary_vasp], [6, p.tier]].forEach(([n, s]) => {
    if (!s) return;
    const b = Buffer.from(s);
    parts.push(Buffer.from([(n << 3) | 2, b.length]), b);
  });
  return Buffer.concat(parts);
}

// ---- EVM JSON-RPC -----------------------------------------------------------------------------
const receipts = new Map(); // hash → {receipt, visibleAt}
function gateCheck(fromHex, data) {
  if (!data || !data.startsWith('0x23ec66fc')) return 'execution reverted: use transferWithTravelRule';
  const to = '0x' + data.slice(10 + 24, 10 + 64);
  const amount = BigInt('0x' + data.slice(74, 138));
  const f = acct(fromHex), t = acct(to);
  if (!f.identity) return `execution reverted: sender=${toBech32(fromHex)}: no identity record`;
  if (!t.identity) return `execution reverted: recipient=${toBech32(to)}: no identity record`;
  if (f.hkd < amount) return 'execution reverted: insufficient funds';
  return { to, amount };
}
async function evm(req, res) {
  const body = await readBody(req);
  const reply = (result) => send(res, 200, { jsonrpc: '2.0', id: body?.id ?? null, result });
  const error = (code, message, data) => send(res, 200, { jsonrpc: '2.0', id: body?.id ?? null, error: { code, message, ...(data ? { data } : {}) } });
  if (!body) return error(-32700, 'parse error');
  const [a0] = body.params || [];
  switch (body.method) {
    case 'eth_chainId': return reply('0x354');
    case 'net_version': return reply('852');
    case 'eth_blockNumber': return reply('0x' + height.toString(16));
    case 'eth_gasPrice': return reply('0x' + GAS_PRICE.toString(16));
    case 'eth_maxPriorityFeePerGas': return reply('0x0');
    case 'eth_estimateGas': return reply('0x30d40');
    case 'eth_getBalance': return reply('0x' + acct(String(a0).toLowerCase()).native.toString(16));
    case 'eth_getTransactionCount': return reply('0x' + acct(String(a0).toLowerCase()).nonce.toString(16));
    case 'eth_getBlockByNumber': return reply({ number: '0x' + height.toString(16), baseFeePerGas: '0x' + GAS_PRICE.toString(16), gasLimit: '0xbebc200', timestamp: '0x' + Math.floor(now() / 1000).toString(16), transactions: [] });
    case 'eth_call': {
      const r = gateCheck(String(a0?.from || '').toLowerCase(), a0?.data);
      return typeof r === 'string' ? error(3, r, '0x08c379a0') : reply('0x' + '1'.padStart(64, '0'));
    }
    case 'eth_getTransactionReceipt': {
      const r = receipts.get(String(a0).toLowerCase());
      return reply(r && r.visibleAt <= now() ? r.receipt : null);
    }
    case 'eth_sendRawTransaction': {
      let tx, from;
      try {
        tx = parseTransaction(a0);
        from = (await recoverTransactionAddress({ serializedTransaction: a0 })).toLowerCase();
      } catch (e) { return error(-32000, `invalid transaction: ${e.shortMessage || e.message}`); }
      if (tx.chainId !== 852) return error(-32000, `invalid chain id ${tx.chainId}`);
      const f = acct(from);
      if (tx.nonce !== f.nonce) return error(-32000, `invalid nonce: expected ${f.nonce}, got ${tx.nonce}`);
      const fee = BigInt(tx.gas) * GAS_PRICE;
      if (f.native < fee) return error(-32000, `insufficient funds for gas * price: balance ${f.native}, need ${fee}`);
      f.nonce++;
      f.native -= fee / 2n; // a part of the gas is refunded
      const hash = keccak256(a0);
      let status = '0x0';
      if ((tx.to || '').toLowerCase() === TOKEN_ADDRESS) {
        const r = gateCheck(from, tx.data);
        if (typeof r !== 'string') { f.hkd -= r.amount; acct(r.to).hkd += r.amount; status = '0x1';
          addAudit({ tx_type: 'transfer', subject: toBech32(from), counterparty: toBech32(r.to), amount: Number(r.amount), tx_hash: hash.slice(2).toUpperCase() }); }
      } else status = '0x1';
      const bn = ++height;
      receipts.set(hash, { visibleAt: now() + 1500, receipt: { transactionHash: hash, status, blockNumber: '0x' + bn.toString(16), blockHash: '0x' + hex32().toLowerCase(), from, to: tx.to,
        gasUsed: '0x' + (tx.gas / 2n).toString(16), cumulativeGasUsed: '0x' + (tx.gas / 2n).toString(16), effectiveGasPrice: '0x' + GAS_PRICE.toString(16), logs: [], type: '0x2', transactionIndex: '0x0', logsBloom: '0x' + '0'.repeat(512), contractAddress: null } });
      return reply(hash);
    }
    default: return error(-32601, `method ${body.method} not supported by the mock`);
  }
}

// ---- console ------------------------------------------------------------------------------------
// The desk holds both people's keys; a session comes from a signed sign-in challenge.
const deskPeople = {
  [reviewerAddr]: { key_name: 'jane', role: 'reviewer', label: 'review desk' },
  [officerAddr]: { key_name: 'omar', role: 'officer', label: 'MLRO' },
};
const sessions = new Map(); // token -> { address, csrf, ...person }
const deskChallenges = new Map(); // nonce -> { address, message, used }
const inRange = (t, from, to) => (!from || t >= new Date(from).getTime()) && (!to || t < new Date(to).getTime());
function filterFlags(q) {
  const st = q.get('status');
  return flags.filter((f) => (!st || st === 'FLAG_STATUS_UNSPECIFIED' || f.status === st) && (!q.get('vasp') || f.vasp === q.get('vasp'))
    && (!q.get('tx_hash') || f.tx_hash.toLowerCase() === q.get('tx_hash').toLowerCase().replace(/^0x/, ''))
    && inRange(new Date(f.created_at).getTime(), q.get('from'), q.get('to')));
}
function filterAudit(q) {
  return audit.filter((e) => (!q.get('subject') || e.subject === q.get('subject')) && (!q.get('tx_type') || e.tx_type === q.get('tx_type'))
    && (!q.get('tx_hash') || e.tx_hash.toLowerCase() === q.get('tx_hash').toLowerCase().replace(/^0x/, ''))
    && inRange(new Date(e.block_time).getTime(), q.get('from'), q.get('to')));
}
const cellsOf = (f) => ({ cells: { flag_id: f.flag_id, status: f.status, decorator: f.decorator, subject: f.subject, counterparty: f.counterparty,
  amount: `${f.amount.amount}${f.amount.denom}`, vasp: f.vasp, resolution: f.resolution, created_at: f.created_at, tx_hash: f.tx_hash } });

async function consoleApp(req, res, url) {
  const p = url.pathname;
  if (req.method === 'GET' && p === '/') return asset(res, 'console/index.html');
  if (req.method === 'GET' && p.startsWith('/assets/')) return asset(res, p.slice(8));
  if (!p.startsWith('/api/')) return fail(res, 404, 'not_found', 'no such route');
  if (req.method === 'POST' && p === '/api/signin/challenge') {
    const body = await readBody(req);
    if (!body || typeof body.address !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(body.address)) return badAddr(res, body && body.address);
    const nonce = crypto.randomBytes(8).toString('hex');
    const issued = iso(now());
    const message = `127.0.0.1:${PORTS.desk} wants you to sign in with your Ethereum account:\n${getAddress(body.address)}\n\n` +
      `Sign in to the Lantau compliance desk. Signing proves that you control this address; it costs nothing and sends no transaction.\n\n` +
      `URI: http://127.0.0.1:${PORTS.desk}/\nVersion: 1\nChain ID: 852\nNonce: ${nonce}\nIssued At: ${issued}\nExpiration Time: ${iso(now() + 300_000)}`;
    deskChallenges.set(nonce, { address: getAddress(body.address), message, used: false });
    return send(res, 200, { nonce, message, issued_at: issued, expires_at: iso(now() + 300_000) });
  }
  if (req.method === 'POST' && p === '/api/signin') {
    const body = await readBody(req);
    const nonce = body && /\nNonce: ([0-9a-f]+)\n/.exec(body.message || '')?.[1];
    const c = nonce && deskChallenges.get(nonce);
    if (!c || c.message !== body.message) return fail(res, 400, 'invalid_request', 'not a challenge of this desk');
    if (c.used) return fail(res, 409, 'challenge_used', 'this sign-in challenge was already used');
    if (!(await verifyMessage({ address: c.address, message: body.message, signature: body.signature }).catch(() => false))) return fail(res, 401, 'bad_signature', 'the signature does not prove the address');
    c.used = true;
    const address = toBech32(c.address);
    const token = crypto.randomBytes(16).toString('hex');
    const session = { address, csrf: crypto.randomBytes(16).toString('hex'), ...(deskPeople[address] || { key_name: null, role: null, label: '' }) };
    sessions.set(token, session);
    return send(res, 200, { token, csrf_token: session.csrf, address, expires_at: iso(now() + 8 * 3600_000) });
  }
  const s = sessions.get((req.headers.authorization || '').replace(/^Bearer /, ''));
  if (!s) return fail(res, 401, 'unauthorized', 'sign in to the console (with your wallet)');
  const q = url.searchParams;
  let m;
  if (req.method === 'GET') {
    if (p === '/api/session') {
      return send(res, 200, { address: s.address, key_name: s.key_name, can_act: !!s.key_name, role: s.role, parent: issuerAddr, label: s.label, groups: [],
        expires_at: iso(now() + 8 * 3600_000), chain_id: 'lantau-mock-1', csrf_token: s.csrf, hkd: { denom: HKD, display: 'HKD', decimals: 2 } });
    }
    if (p === '/api/proposals') return send(res, 200, { address: s.address, groups: [] });
    if ((m = /^\/api\/attachments\/([0-9a-f]{64})$/.exec(p))) {
      const a = attachments.get(m[1]);
      if (!a) return fail(res, 404, 'not_found', `no attachment ${m[1]}`);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      return res.end(a);
    }
    if (p === '/api/flags') return send(res, 200, { flags: filterFlags(q), pagination: { next_key: null, total: '0' } });
    if (p === '/api/audit_log') return send(res, 200, { entries: filterAudit(q), pagination: { next_key: null, total: '0' } });
    // The shape of the node's verifiable export (no real proofs: a mock).
    if (p === '/api/audit_export') {
      return send(res, 200, { format: 'lantau-audit-export/1', from: q.get('from') || null, to: q.get('to') || null,
        links: audit.map((e) => ({ sequence: String(e.sequence), row_sha256: sha256(JSON.stringify(e)) })),
        anchor: { height: String(height), audit_sequence: String(audit.length), header: { chain_id: 'lantau-mock-1', height: String(height) } } });
    }
    if (p === '/api/params') return send(res, 200, { params: { authority: authorityAddr, rules: { travel_rule_full_threshold: '800000', velocity_window_seconds: '60', velocity_tx_limit: '10' } } });
    if (p === '/api/report') {
      const inP = flags.filter((f) => inRange(new Date(f.created_at).getTime(), q.get('period_start'), q.get('period_end')));
      return send(res, 200, { sections: [{ name: 'par_value_daily', rows: [] }, { name: 'sanctions_hits', rows: [] },
        { name: 'threshold_flags', rows: inP.filter((f) => f.status === 'FLAG_STATUS_EMITTED').map(cellsOf) },
        { name: 'review_closures', rows: inP.filter((f) => f.status !== 'FLAG_STATUS_EMITTED').map(cellsOf) }] });
    }
    if ((m = /^\/api\/case\/(\d+)$/.exec(p))) {
      const f = flags.find((x) => x.flag_id === m[1]);
      if (!f) return fail(res, 404, 'not_found', `no flag ${m[1]}`);
      const held = f === FLAG || Number(f.flag_id) % 2 === 0;
      const trace = traces.get(f.tx_hash);
      const id = identities.get(f.subject);
      return send(res, 200, {
        flag: f,
        tx: { txhash: f.tx_hash, height: f.block_height, code: 0, codespace: '', raw_log: '', gas_used: '168502', gas_wanted: '218870', timestamp: f.created_at,
          tx: { body: { messages: [{ '@type': '/cosmos.bank.v1beta1.MsgSend', from_address: f.subject, to_address: f.counterparty, amount: [f.amount] }] } } },
        trace: held
          ? { source: 'tx_trace', label: 'Recorded by the node when it executed the transaction (TxTrace).', trace }
          : { source: 'simulate_trace', label: "Rebuilt now by SimulateTrace against today's state: the node no longer holds the live trace; a later identity or sanctions change can make it differ from what ran.", trace },
        travel_rule_payload: { tx_hash: f.tx_hash.toLowerCase(), originator_ref: id?.ivms101_off_chain_ref || '', beneficiary_ref: 'ivms101:lantau-demo-issuer', originator_vasp: id?.vasp_identifier || '', beneficiary_vasp: 'VASP-LANTAU-DEMO-ISSUER', tier: f.decorator === 'threshold' ? 'full' : 'minimal' },
        identity: id || null,
        subject_audit: audit.filter((e) => e.subject === f.subject || e.counterparty === f.subject),
        earlier_flags: flags.filter((x) => x.subject === f.subject && x.flag_id !== f.flag_id),
        notes: notes.get(f.flag_id) || [],
      });
    }
    return fail(res, 404, 'not_found', 'no such route');
  }
  if (req.headers['x-csrf-token'] !== s.csrf) return fail(res, 403, 'csrf', 'a console action needs the session\'s X-CSRF-Token');
  if (req.headers.origin && req.headers.origin !== `http://127.0.0.1:${PORTS.desk}`) return fail(res, 403, 'csrf', `the request comes from another origin (${req.headers.origin})`);
  const body = await readBody(req);
  if (!body) return malformed(res, 'not a JSON object');
  if (p === '/api/signout') { for (const [t, x] of sessions) if (x === s) sessions.delete(t); return send(res, 200, { signed_out: true }); }
  if (!(m = /^\/api\/flags\/(\d+)\/(review|escalate|close)$/.exec(p))) return fail(res, 404, 'not_found', 'no such route');
  const [, id, action] = m;
  const f = flags.find((x) => x.flag_id === id);
  const txHash = hex32();
  await slow(900);
  const refuse = (code, log) => fail(res, 422, 'tx_refused', `the chain refused the transaction (codespace compliance, code ${code}): ${log}`, { tx_hash: txHash, tx_code: code, codespace: 'compliance', raw_log: log });
  if ((action === 'review' || action === 'close') && !['APPROVED', 'BLOCKED'].includes(body.decision)) return fail(res, 400, 'invalid_request', 'decision must be APPROVED or BLOCKED');
  if (action === 'escalate' && (typeof body.note !== 'string' || !body.note.trim())) return fail(res, 400, 'invalid_request', 'an escalation needs a note');
  if (s.role === 'reviewer' && action === 'close') return refuse(11, 'failed to execute message; message index: 0: MsgCloseFlag: the signer holds no active officer binding');
  if (s.role === 'officer' && action !== 'close') return refuse(11, 'the signer may sign only MsgCloseFlag');
  if (!f) return refuse(6, `failed to execute message; message index: 0: flag ${id} not found`);
  const need = action === 'close' ? 'FLAG_STATUS_PENDING_OFFICER' : 'FLAG_STATUS_EMITTED';
  if (f.status !== need) return refuse(action === 'close' ? 8 : 7, `failed to execute message; message index: 0: flag ${id} is ${f.status}: only a ${need.replace('FLAG_STATUS_', '')} flag can be ${action === 'close' ? 'closed' : 'reviewed'}`);
  const h = ++height;
  const base = { subject: f.subject, counterparty: f.counterparty, amount: Number(f.amount.amount), tx_hash: txHash, height: h };
  f.updated_at = iso(now());
  if (action === 'escalate') {
    f.status = 'FLAG_STATUS_PENDING_OFFICER'; f.reviewer = s.address; f.officer_note_hash = sha256(body.note);
    if (!notes.has(id)) notes.set(id, []);
    const files = (body.attachments || []).map((a) => {
      const bytes = Buffer.from(a.content_base64, 'base64');
      const h = crypto.createHash('sha256').update(bytes).digest('hex');
      attachments.set(h, bytes);
      return { name: a.name, sha256: h, bytes: bytes.length };
    });
    notes.get(id).push({ author: s.address, at: iso(now()), text: body.note, hash: sha256(body.note), attachments: files });
    addAudit({ ...base, tx_type: 'flag_escalate', metadata: { flag_id: id, decorator: f.decorator, reviewer: s.address, officer_note_hash: f.officer_note_hash, status: f.status } });
  } else {
    f.status = body.decision === 'BLOCKED' ? 'FLAG_STATUS_RESOLVED_BLOCKED' : 'FLAG_STATUS_RESOLVED_APPROVED';
    f.resolution = body.decision;
    f.evidence_hash = sha256(body.evidence || '');
    if (action === 'close') f.officer = s.address; else f.reviewer = s.address;
    if (body.decision === 'BLOCKED') addAudit({ ...base, amount: undefined, counterparty: '', tx_type: 'blacklist', metadata: { evidence_ref: `flag/${id}`, previous_level: identities.get(f.subject)?.level || '', reason: 'flag_blocked' } });
    addAudit({ ...base, tx_type: action === 'close' ? 'flag_close' : 'flag_review', metadata: { flag_id: id, decorator: f.decorator, reviewer: s.address, decision: body.decision, evidence_hash: f.evidence_hash, status: f.status, role: s.role } });
    if (body.decision === 'BLOCKED' && identities.has(f.subject)) identities.get(f.subject).level = 'LEVEL_BLACKLISTED';
  }
  return send(res, 200, { tx_hash: txHash, height: String(h), code: 0 });
}

// ---- start ----------------------------------------------------------------------------------------
function serve(port, handler) {
  http.createServer((req, res) => {
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    Promise.resolve(handler(req, res, url)).catch((e) => { console.error(e); if (!res.headersSent) fail(res, 500, 'internal', String(e)); });
  }).listen(port, '127.0.0.1');
}
const env = {
  PORTAL_URL: `http://127.0.0.1:${PORTS.portal}/`,
  EVM_RPC_URL: `http://127.0.0.1:${PORTS.evm}`,
  NEWCOMER_KEY: newcomerKey,
  RECIPIENT: getAddress(recipient),
  DESK_URL: `http://127.0.0.1:${PORTS.desk}/`,
  REVIEWER_KEY: reviewerKey,
  OFFICER_KEY: officerKey,
  FLAG_TX_HASH: FLAG.tx_hash,
};
serve(PORTS.portal, portal);
serve(PORTS.desk, consoleApp);
serve(PORTS.evm, evm);
const envFile = argv.includes('--write-env') ? argv[argv.indexOf('--write-env') + 1] : null;
const lines = Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n') + '\n';
if (envFile) fs.writeFileSync(envFile, lines);
process.stdout.write(`mock servers up (assets from ${ASSETS})\n${lines}`);
