#!/usr/bin/env node
// End-to-end browser test of the portal and the reviewers' console: Debian's chromium driven by
// playwright-core (never a downloaded browser), an injected EIP-1193 wallet (wallet.mjs).
//
//   node e2e.mjs onboarding    env PORTAL_URL, EVM_RPC_URL, NEWCOMER_KEY, RECIPIENT, ARTIFACTS_DIR
//   node e2e.mjs review        env DESK_URL (the shared desk, no token), REVIEWER_KEY, OFFICER_KEY (their wallets' keys), EVM_RPC_URL,
//                              MEMBER_KEY (optional: a group member with one proposal awaiting their approval),
//                              FLAG_TX_HASH, ARTIFACTS_DIR
//   node e2e.mjs worklist      env WORKLIST_CONSOLE_URL (a console over a node answering 1000
//                              flags), WANT_TX, WANT_ID (one of them), ARTIFACTS_DIR
//   optional: CHROMIUM (default /usr/bin/chromium), STEP_TIMEOUT_MS (default 30000),
//             TX_TIMEOUT_MS (waits that include a block or a receipt; default 120000)
//
// One line per step; screenshots of every step at 1280x800 and 390x844 into ARTIFACTS_DIR
// (`<page>-<step>-desktop.png`, `…-phone.png`). Exits non-zero with the reason on the first
// failed expectation, an uncaught page error or a console error. Every wait is bounded.

import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { installWallet } from './wallet.mjs';

const phase = process.argv[2];
const STEP = Number(process.env.STEP_TIMEOUT_MS || 30000);
const TX = Number(process.env.TX_TIMEOUT_MS || 120000);
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

class Failure extends Error {}
function env(name) {
  const v = process.env[name];
  if (!v) throw new Failure(`environment variable ${name} is required for phase ${phase}`);
  return v;
}
let stepNo = 0;
const step = (text) => console.log(`[${phase}] ${String(++stepNo).padStart(2)}. ${text}`);
const note = (text) => console.log(`[${phase}]     ${text}`);
const sel = (testid, extra = '') => `[data-testid="${testid}"]${extra}`;

let artifacts;
const problems = []; // page errors and console errors, across pages

function watch(page, name) {
  page.on('pageerror', (e) => problems.push(`${name}: uncaught error in the page: ${e.message}`));
  page.on('console', (m) => {
    // A refused request (4xx the page shows as a message) is logged by the browser as a failed
    // resource load: expected, the page handles it.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) problems.push(`${name}: console error: ${m.text()}`);
  });
}
function checkProblems() {
  if (problems.length) throw new Failure(problems.join('\n'));
}

// Both viewports, full page; the page is left at the desktop size.
async function shot(page, name) {
  checkProblems();
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(artifacts, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(artifacts, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
}

// Waits until `fn(arg)` is truthy in the page; `what` says what was expected.
async function until(page, what, fn, arg, timeout = STEP) {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling: 200 });
  } catch (e) {
    throw new Failure(`${what}: not seen within ${timeout / 1000} s${e.message.includes('Timeout') ? '' : ` (${e.message.split('\n')[0]})`}`);
  }
}

// Waits until a message box leaves "pending"; fails unless it ends in `want` (ok|error), with
// what the page said.
async function outcome(page, testid, want, timeout = STEP) {
  await until(page, `${testid} to show an outcome`, (id) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    return el && (el.dataset.state === 'ok' || el.dataset.state === 'error');
  }, testid, timeout);
  const box = page.locator(sel(testid));
  const state = await box.getAttribute('data-state');
  const text = (await box.innerText()).replace(/\s+/g, ' ').trim();
  if (state !== want) throw new Failure(`${testid}: expected ${want}, the page says (${state}): ${text}`);
  return { text, code: await box.getAttribute('data-code') };
}

const attr = (page, testid, name) => page.locator(sel(testid)).first().getAttribute(name);
async function expectAttr(page, testid, name, predicate, what, timeout = STEP) {
  await until(page, what, ([id, n, p]) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    // eslint-disable-next-line no-new-func
    return el && new Function('v', `return (${p})(v)`)(el.getAttribute(n));
  }, [testid, name, predicate.toString()], timeout);
}

async function launch() {
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) throw new Failure(`no browser at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

// ---- onboarding ------------------------------------------------------------------------------

async function onboarding(browser) {
  const portalUrl = env('PORTAL_URL'), rpcUrl = env('EVM_RPC_URL'), key = env('NEWCOMER_KEY'), recipient = env('RECIPIENT');
  const ctx = await browser.newContext({ viewport: DESKTOP });
  const page = await ctx.newPage();
  watch(page, 'portal');
  const wallet = await installWallet(page, { privateKey: key, rpcUrl });
  note(`newcomer ${wallet.address}, recipient ${recipient}`);

  step('open the portal with a wallet');
  await page.goto(portalUrl);
  await page.locator(sel('portal-app', '[data-config-loaded="true"]')).waitFor({ timeout: STEP });
  await page.locator(sel('connect-wallet')).waitFor({ timeout: STEP });
  await shot(page, 'portal-start');

  step('connect the wallet (eth_requestAccounts)');
  await page.locator(sel('connect-wallet')).click();
  await outcome(page, 'connect-result', 'ok');
  await expectAttr(page, 'wallet-address', 'data-value', (v) => !!v, 'the connected address');
  const shownAddr = await attr(page, 'wallet-address', 'data-value');
  if (shownAddr.toLowerCase() !== wallet.address.toLowerCase()) throw new Failure(`wallet-address shows ${shownAddr}, the wallet is ${wallet.address}`);

  step('add the network (wallet_addEthereumChain 0x354, then switch)');
  await page.locator(sel('add-network')).click();
  await outcome(page, 'connect-result', 'ok');
  await expectAttr(page, 'wallet-chain', 'data-on-lantau', (v) => v === 'true', 'the wallet on the Lantau chain');
  const added = wallet.addedChains[0];
  if (!added || added.chainId.toLowerCase() !== '0x354') throw new Failure(`wallet_addEthereumChain was not called with 0x354: ${JSON.stringify(wallet.addedChains)}`);
  if (added.nativeCurrency.symbol !== 'LANTAU' || added.nativeCurrency.decimals !== 18 || !added.rpcUrls[0]) throw new Failure(`wallet_addEthereumChain parameters: ${JSON.stringify(added)}`);
  note(`added ${added.chainName} rpc ${added.rpcUrls[0]}`);
  await page.locator(sel('balance-native')).waitFor({ timeout: STEP });
  await shot(page, 'portal-connect');

  step('native faucet for the connected address');
  const native0 = BigInt(await attr(page, 'balance-native', 'data-raw'));
  const prefilled = await page.locator(sel('native-address')).inputValue();
  if (prefilled.toLowerCase() !== wallet.address.toLowerCase()) throw new Failure(`native-address is prefilled with "${prefilled}", not the wallet's address`);
  await page.locator(sel('native-faucet')).click();
  await outcome(page, 'native-faucet-result', 'ok', TX);
  await expectAttr(page, 'balance-native', 'data-raw', `(v) => BigInt(v || 0) > ${native0}n`, 'the native balance to grow');
  note(`native balance ${await page.locator(sel('balance-native')).innerText()}`);
  await shot(page, 'portal-gas');

  step('apply for an identity (challenge, personal_sign, apply)');
  await page.locator(sel('identity-status', '[data-status="none"]')).waitFor({ timeout: STEP }).catch(async () => {
    throw new Failure(`identity-status should be "none" for a newcomer, it is "${await attr(page, 'identity-status', 'data-status')}"`);
  });
  await page.locator(sel('kyc-given-name')).fill('Mei');
  await page.locator(sel('kyc-family-name')).fill('Chan');
  await page.locator(sel('kyc-dob')).fill('1990-04-01');
  await page.locator(sel('kyc-country')).fill('HK');
  await page.locator(sel('kyc-id-number')).fill('A1234563');
  await page.locator(sel('kyc-id-type')).selectOption('NATIONAL_IDENTITY_NUMBER');
  await shot(page, 'portal-kyc-form');
  await page.locator(sel('kyc-apply')).click();
  const kyc = await outcome(page, 'kyc-result', 'ok', TX);
  note(kyc.text);
  const signCall = wallet.log.find((r) => r.method === 'personal_sign');
  if (!signCall) throw new Failure('the page never asked the wallet for personal_sign');
  if (!/^0x[0-9a-f]+$/i.test(signCall.params[0]) || signCall.params[1].toLowerCase() !== wallet.address.toLowerCase()) throw new Failure(`personal_sign params should be [hex message, address]: ${JSON.stringify(signCall.params).slice(0, 200)}`);
  const siwe = Buffer.from(signCall.params[0].slice(2), 'hex').toString('utf8');
  if (!/Chain ID: 852/.test(siwe) || !siwe.includes(wallet.address)) throw new Failure(`the signed message is not the EIP-4361 challenge for ${wallet.address} on chain 852:\n${siwe}`);
  await expectAttr(page, 'identity-status', 'data-status', (v) => v === 'enrolled', 'identity-status "enrolled" (the portal auto-approves on a dev network)', TX);
  await expectAttr(page, 'application-status', 'data-status', (v) => v === 'enrolled', 'application-status "enrolled"');
  await shot(page, 'portal-kyc');

  step('HKD faucet for the enrolled address');
  const hkd0 = BigInt(await attr(page, 'balance-hkd', 'data-raw'));
  await page.locator(sel('hkd-faucet')).click();
  await outcome(page, 'hkd-faucet-result', 'ok', TX);
  await expectAttr(page, 'balance-hkd', 'data-raw', `(v) => BigInt(v || 0) > ${hkd0}n`, 'the HKD balance to grow');
  const hkd1 = BigInt(await attr(page, 'balance-hkd', 'data-raw'));
  note(`HKD balance ${await page.locator(sel('balance-hkd')).innerText()}`);
  await shot(page, 'portal-hkd');

  step(`send HKD 1.00 to ${recipient} through the wallet`);
  await page.locator(sel('send-to')).fill(recipient);
  await page.locator(sel('send-amount')).fill('1.00');
  await page.locator(sel('send-submit')).click();
  await until(page, 'send-result pending (submitted)', () => document.querySelector('[data-testid="send-result"]')?.dataset.state !== 'empty');
  const sent = await outcome(page, 'send-result', 'ok', TX);
  if ((await attr(page, 'send-result', 'data-receipt-status')) !== '0x1') throw new Failure(`send-result does not carry receipt status 0x1: ${sent.text}`);
  if (!wallet.log.some((r) => r.method === 'eth_sendTransaction')) throw new Failure('the page did not use eth_sendTransaction');
  note(sent.text);
  await expectAttr(page, 'balance-hkd', 'data-raw', `(v) => BigInt(v || 0) === ${hkd1 - 100n}n`, `the HKD balance to drop by 1.00 to ${hkd1 - 100n}`, TX);
  await shot(page, 'portal-send');
  await ctx.close();

  step('without a wallet: paste an address into the gas faucet');
  const ctx2 = await browser.newContext({ viewport: DESKTOP });
  const page2 = await ctx2.newPage();
  watch(page2, 'portal (no wallet)');
  await page2.goto(portalUrl);
  await page2.locator(sel('no-wallet')).waitFor({ timeout: STEP });
  const pasted = privateKeyToAccount(generatePrivateKey()).address;
  await page2.locator(sel('native-address')).fill(pasted);
  await page2.locator(sel('native-faucet')).click();
  await outcome(page2, 'native-faucet-result', 'ok', TX);
  await expectAttr(page2, 'account-hex', 'data-value', `(v) => (v || '').toLowerCase() === '${pasted.toLowerCase()}'`, 'the pasted address in the account panel');
  await expectAttr(page2, 'balance-native', 'data-raw', (v) => BigInt(v || 0) > 0n, 'a native balance for the pasted address');
  await shot(page2, 'portal-paste');

  step('a second request inside the window is refused with the rate-limit message');
  await page2.locator(sel('native-faucet')).click();
  const limited = await outcome(page2, 'native-faucet-result', 'error', TX);
  if (limited.code !== 'rate_limited') throw new Failure(`expected code rate_limited, got ${limited.code}: ${limited.text}`);
  await page2.locator(sel('native-faucet-result-retry')).waitFor({ timeout: STEP }).catch(() => { throw new Failure(`the rate-limit message shows no retry time: ${limited.text}`); });
  note(limited.text);
  await shot(page2, 'portal-rate-limited');
  await ctx2.close();
}

// ---- review ------------------------------------------------------------------------------------

// Opens the desk; with `key`, as a person with that key in their wallet, signing in (Sign-In with
// Ethereum); without, a URL that carries its session token.
async function openConsole(browser, url, name, key) {
  const ctx = await browser.newContext({ viewport: DESKTOP, acceptDownloads: true });
  const page = await ctx.newPage();
  watch(page, name);
  let wallet = null;
  if (key) wallet = await installWallet(page, { privateKey: key, rpcUrl: env('EVM_RPC_URL') });
  await page.goto(url);
  if (wallet) {
    await page.locator(sel('signin')).waitFor({ timeout: STEP });
    await page.locator(sel('signin-wallet')).click();
  }
  await page.locator(sel('console-app', '[data-ready="true"]')).waitFor({ timeout: STEP }).catch(async () => {
    const err = await page.locator(`${sel('session-error')}, ${sel('signin-error')}`).first().innerText().catch(() => '');
    throw new Failure(`${name}: the console did not start${err ? `: ${err}` : ''}`);
  });
  if (/token=/.test(page.url())) throw new Failure(`${name}: the token is still in the address bar: ${page.url()}`);
  if (wallet) {
    const signed = wallet.log.find((r) => r.method === 'personal_sign');
    const text = signed ? Buffer.from(signed.params[0].slice(2), 'hex').toString('utf8') : '';
    if (!/Sign in to the Lantau compliance desk/.test(text) || !text.includes(wallet.address)) throw new Failure(`${name}: the wallet signed no desk sign-in for ${wallet.address}:\n${text}`);
    const shown = await attr(page, 'session-address', 'data-value');
    note(`${name} signed in as ${shown}`);
  }
  return { ctx, page, wallet };
}

// Finds the flag row of the transaction in the worklist (refreshing while it is not there yet).
async function findFlag(page, txHash, status) {
  const h = txHash.replace(/^0x/i, '').toUpperCase();
  await page.locator(sel('filter-status')).selectOption(status);
  await until(page, `a ${status} flag for tx ${h} in the worklist`, (hash) => {
    const rows = [...document.querySelectorAll('[data-testid="flag-row"]')];
    if (rows.some((r) => r.dataset.txHash.replace(/^0x/i, '').toUpperCase() === hash)) return true;
    const wl = document.querySelector('[data-testid="worklist"]');
    if (wl && wl.dataset.loading === 'false') document.querySelector('[data-testid="worklist-refresh"]').click();
    return false;
  }, h, TX);
  const id = await page.locator(sel('flag-row')).evaluateAll((rows, hash) => {
    const r = rows.find((x) => x.dataset.txHash.replace(/^0x/i, '').toUpperCase() === hash);
    return r ? r.dataset.flagId : null;
  }, h);
  const row = page.locator(sel('flag-row', `[data-flag-id="${id}"]`));
  return { row, id };
}

async function decide(page, button, noteText, files) {
  await page.locator(sel('action-note')).fill(noteText);
  if (files) await page.locator(sel('action-attachment')).setInputFiles(files);
  await page.locator(sel(button)).click();
  await page.locator(sel('confirm-dialog')).waitFor({ timeout: STEP });
  await page.locator(sel('action-confirm')).click();
  await until(page, 'the spinner while the server answers', () => {
    const el = document.querySelector('[data-testid="action-result"]');
    return el && el.dataset.state !== 'empty';
  });
  const r = await outcome(page, 'action-result', 'ok', TX);
  const hash = await attr(page, 'action-tx-hash', 'data-value');
  if (!hash) throw new Failure(`no tx hash in the confirmation: ${r.text}`);
  return { ...r, hash };
}

async function review(browser) {
  const deskUrl = env('DESK_URL'), txHash = env('FLAG_TX_HASH');

  step('the reviewer signs in to the desk with her wallet');
  const r = await openConsole(browser, deskUrl, 'reviewer', env('REVIEWER_KEY'));
  const role = await attr(r.page, 'session-role', 'data-value');
  if (role !== 'reviewer') throw new Failure(`the reviewer console's key has role "${role}"`);
  note(`reviewer ${await attr(r.page, 'session-address', 'data-value')}`);

  step('the worklist shows the flag (EMITTED)');
  const { row, id } = await findFlag(r.page, txHash, 'FLAG_STATUS_EMITTED');
  note(`flag #${id}`);
  await shot(r.page, 'console-worklist');

  step('worklist search, sort and layout');
  const count = async () => Number(await attr(r.page, 'worklist-count', 'data-count'));
  const all = await count();
  await r.page.locator(sel('worklist-search')).fill(txHash.replace(/^0x/i, '').slice(8, 20).toLowerCase());
  await until(r.page, 'the search to narrow the list to the flag', ([want]) => {
    const rows = [...document.querySelectorAll('[data-testid="flag-row"]')];
    return rows.length === 1 && rows[0].dataset.flagId === want;
  }, [id]);
  await r.page.locator(sel('worklist-search')).fill('no-such-subject-or-hash');
  await until(r.page, 'no flag matching nonsense', () => document.querySelector('[data-testid="worklist-count"]').dataset.count === '0');
  await r.page.locator(sel('worklist-search')).fill('');
  await until(r.page, 'every flag again', ([n]) => document.querySelector('[data-testid="worklist-count"]').dataset.count === String(n), [all]);
  await r.page.locator(sel('sort-amount')).click();
  await r.page.locator(sel('sort-amount')).click();
  if ((await attr(r.page, 'sort-amount', 'data-dir')) !== 'desc') throw new Failure('sorting by amount twice is not descending');
  for (const [vp, name] of [[{ width: 1280, height: 800 }, 'desktop'], [{ width: 390, height: 844 }, 'phone']]) {
    await r.page.setViewportSize(vp);
    const box = await row.locator(sel('open-case')).boundingBox();
    if (!box || box.x < 0 || box.x + box.width > vp.width) throw new Failure(`on the ${name} (${vp.width} wide) the Open button is off the page: ${JSON.stringify(box)}`);
  }
  await r.page.setViewportSize(DESKTOP);
  note(`${all} flags; search, sort and the Open button at 1280 and 390 wide`);

  step('open the case: trace (7 rows), Travel Rule payload, identity, history');
  await row.locator(sel('open-case')).click();
  await r.page.locator(sel('case-view', `[data-flag-id="${id}"][data-loading="false"]`)).waitFor({ timeout: STEP });
  await r.page.locator(sel('case-flag-status', '[data-status="FLAG_STATUS_EMITTED"]')).waitFor({ timeout: STEP });
  const source = await attr(r.page, 'trace-source', 'data-source');
  const traceRows = await r.page.locator(sel('trace-row')).count();
  if (traceRows !== 7) throw new Failure(`the trace shows ${traceRows} rows (source ${source}), 7 expected: ${await r.page.locator(sel('case-trace')).innerText()}`);
  const flagged = await r.page.locator(sel('trace-row', '[data-gate="threshold_gate"]')).getAttribute('data-status').catch(() => null);
  note(`trace from ${source}; threshold_gate ${flagged}`);
  const tr = await r.page.locator(sel('travel-rule-originator-ref')).innerText().catch(() => '');
  if (!tr.trim()) throw new Failure(`no Travel Rule payload in the case: ${await r.page.locator(sel('case-travel-rule')).innerText()}`);
  await r.page.locator(sel('case-identity')).locator(sel('identity-level')).waitFor({ timeout: STEP }).catch(async () => {
    throw new Failure(`no identity record in the case: ${await r.page.locator(sel('case-identity')).innerText()}`);
  });
  const history = await r.page.locator(sel('timeline-row')).count();
  if (!history) throw new Failure('the subject\'s audit history is empty');
  note(`${history} audit rows in the subject's history`);
  await shot(r.page, 'console-case');

  step('escalate with a note and a file, confirmed');
  const disabled = await r.page.locator(sel('action-escalate')).isDisabled();
  if (!disabled) throw new Failure('escalate is enabled without a note');
  const escalation = 'Large transfer by a retail-plus customer; source of funds unclear. Please decide.';
  const statement = { name: 'statement.txt', mimeType: 'text/plain', buffer: Buffer.from('HKD 8,000.00 received from a counterparty first seen today') };
  const esc = await decide(r.page, 'action-escalate', escalation, [statement]);
  note(`${esc.text}`);
  await r.page.locator(sel('case-flag-status', '[data-status="FLAG_STATUS_PENDING_OFFICER"]')).waitFor({ timeout: STEP }).catch(async () => {
    throw new Failure(`after escalation the case shows ${await attr(r.page, 'case-flag-status', 'data-status')}`);
  });
  await shot(r.page, 'console-escalated');

  step('the officer signs in to the same desk with his wallet and finds the flag under PENDING_OFFICER');
  const o = await openConsole(browser, deskUrl, 'officer', env('OFFICER_KEY'));
  const orole = await attr(o.page, 'session-role', 'data-value');
  if (orole !== 'officer') throw new Failure(`the officer console's key has role "${orole}"`);
  const def = await o.page.locator(sel('filter-status')).inputValue();
  if (def !== 'FLAG_STATUS_PENDING_OFFICER') throw new Failure(`the officer's worklist starts on ${def}, not PENDING_OFFICER`);
  const found = await findFlag(o.page, txHash, 'FLAG_STATUS_PENDING_OFFICER');
  if (found.id !== id) throw new Failure(`the officer sees flag #${found.id} for the transaction, the reviewer escalated #${id}`);
  await shot(o.page, 'console-officer-worklist');

  step('officer closes it BLOCKED, confirmed, and the status changes');
  await found.row.locator(sel('open-case')).click();
  await o.page.locator(sel('case-view', `[data-flag-id="${id}"][data-loading="false"]`)).waitFor({ timeout: STEP });
  step('the officer reads the reviewer\'s note and her file');
  await o.page.locator(sel('note-text')).first().waitFor({ timeout: STEP }).catch(async () => {
    throw new Failure(`the officer's case shows no note: ${await o.page.locator(sel('case-notes')).innerText()}`);
  });
  const noteText = await o.page.locator(sel('note-text')).first().innerText();
  if (noteText.trim() !== escalation) throw new Failure(`the officer reads "${noteText}", the reviewer wrote "${escalation}"`);
  const author = await o.page.locator(sel('note-row')).first().getAttribute('data-author');
  const reviewerAddr = await attr(r.page, 'session-address', 'data-value');
  if (author !== reviewerAddr) throw new Failure(`the note's author is ${author}, the reviewer is ${reviewerAddr}`);
  const [adl] = await Promise.all([o.page.waitForEvent('download', { timeout: STEP }), o.page.locator(sel('note-attachment')).first().click()]);
  const aPath = path.join(artifacts, `officer-${adl.suggestedFilename()}`);
  await adl.saveAs(aPath);
  if (fs.readFileSync(aPath, 'utf8') !== statement.buffer.toString('utf8')) throw new Failure(`the attachment the officer downloads differs: ${fs.readFileSync(aPath, 'utf8')}`);
  note(`note by ${author} and ${adl.suggestedFilename()} read by the officer`);
  await shot(o.page, 'console-officer-reads-note');
  const closed = await decide(o.page, 'action-close-blocked', 'Blocked after review of the escalation.');
  note(closed.text);
  await o.page.locator(sel('case-flag-status', '[data-status="FLAG_STATUS_RESOLVED_BLOCKED"]')).waitFor({ timeout: STEP }).catch(async () => {
    throw new Failure(`after closing, the case shows ${await attr(o.page, 'case-flag-status', 'data-status')}`);
  });
  await o.page.locator(sel('no-actions')).waitFor({ timeout: STEP });
  await o.page.locator(sel('timeline-row', '[data-tx-type="flag_close"]')).first().waitFor({ timeout: STEP }).catch(() => { throw new Failure('no flag_close row in the subject\'s history after closing'); });
  await shot(o.page, 'console-closed');

  step('dashboards render their charts');
  await o.page.locator(sel('tab-dashboards')).click();
  await o.page.locator(sel('dashboards', '[data-ready="true"]')).waitFor({ timeout: TX });
  for (const c of ['chart-flags-per-day', 'chart-resolution-time', 'chart-volume-hourly', 'chart-events']) {
    const ok = await o.page.locator(sel(c)).evaluate((el) => !!(window.Chart && window.Chart.getChart(el)) && el.width > 0 && el.height > 0).catch(() => false);
    if (!ok) throw new Failure(`chart ${c} was not drawn`);
  }
  await shot(o.page, 'console-dashboards');

  step('audit log explorer: rows, CSV export, report');
  await o.page.locator(sel('tab-audit')).click();
  await o.page.locator(sel('audit-tx-hash')).fill(txHash);
  await o.page.locator(sel('audit-search')).click();
  // Wait for the filtered answer (the unfiltered list is on screen until it arrives).
  await until(o.page, 'audit rows of the flagged transaction only', ([want]) => {
    const rows = [...document.querySelectorAll('[data-testid="audit-row"]')];
    return rows.length > 0 && rows.every((r) => (r.dataset.txHash || '').toLowerCase().replace(/^0x/, '') === want);
  }, [txHash.toLowerCase().replace(/^0x/, '')]);
  const types = await o.page.locator(sel('audit-row')).evaluateAll((rows) => rows.map((x) => x.dataset.txType));
  note(`audit rows for the tx: ${types.join(', ')}`);
  const [dl] = await Promise.all([o.page.waitForEvent('download', { timeout: STEP }), o.page.locator(sel('audit-export-csv')).click()]);
  const csvPath = path.join(artifacts, dl.suggestedFilename());
  await dl.saveAs(csvPath);
  const csv = fs.readFileSync(csvPath, 'utf8').split(/\r?\n/).filter(Boolean);
  if (!/^sequence,block_height,block_time,tx_type,/.test(csv[0] || '')) throw new Failure(`the CSV has no header line: ${csv[0]}`);
  if (csv.length - 1 !== types.length) throw new Failure(`the CSV has ${csv.length - 1} rows, the page shows ${types.length}`);
  note(`CSV ${path.basename(csvPath)}: header + ${csv.length - 1} rows`);
  // The node's verifiable export (lantaud audit verify checks it; here its shape).
  const [xdl] = await Promise.all([o.page.waitForEvent('download', { timeout: STEP }), o.page.locator(sel('audit-export-verifiable')).click()]);
  const xPath = path.join(artifacts, xdl.suggestedFilename());
  await xdl.saveAs(xPath);
  const x = JSON.parse(fs.readFileSync(xPath, 'utf8'));
  if (x.format !== 'lantau-audit-export/1' || !x.links?.length || !x.anchor?.header || x.links.length !== Number(x.anchor.audit_sequence)) {
    throw new Failure(`the verifiable export is not one: ${JSON.stringify(x).slice(0, 300)}`);
  }
  note(`verifiable export ${path.basename(xPath)}: ${x.links.length} rows linked, anchored at height ${x.anchor.height}`);
  await o.page.locator(sel('report-run')).click();
  await until(o.page, 'the report\'s four sections', () => document.querySelectorAll('[data-testid="report-section"]').length === 4);
  await shot(o.page, 'console-audit');

  step('the reviewer console is readable on a phone (worklist)');
  await r.page.locator(sel('tab-worklist')).click();
  await r.page.locator(sel('worklist', '[data-loading="false"]')).waitFor({ timeout: STEP });
  await shot(r.page, 'console-reviewer-after');
  await r.ctx.close();
  await o.ctx.close();

  if (process.env.MEMBER_KEY) {
    step('a group member signs in, sees the proposal awaiting her and approves it');
    const m = await openConsole(browser, deskUrl, 'member', env('MEMBER_KEY'));
    await until(m.page, 'the Proposals tab to count one awaiting', () => /Proposals \(1\)/.test(document.querySelector('[data-testid="tab-proposals"]').textContent), null, TX);
    await m.page.locator(sel('tab-proposals')).click();
    await m.page.locator(sel('proposals', '[data-loading="false"]')).waitFor({ timeout: STEP });
    const rowP = m.page.locator(sel('proposal-row')).first();
    await rowP.waitFor({ timeout: STEP });
    const pid = await rowP.getAttribute('data-proposal-id');
    const msgText = await rowP.locator(sel('proposal-message')).first().innerText();
    if (!/MsgSend/.test(msgText)) throw new Failure(`the proposal's message is not shown as JSON: ${msgText}`);
    await shot(m.page, 'console-proposals');
    await rowP.locator(sel('proposal-approve')).click();
    await m.page.locator(sel('proposal-confirm')).click();
    const res = await outcome(m.page, 'proposal-result', 'ok', TX);
    note(`proposal #${pid}: ${res.text}`);
    await until(m.page, 'the approved proposal to leave the list', () => !document.querySelector('[data-testid="proposal-row"]'), null, TX);
    await shot(m.page, 'console-proposals-approved');
    await m.ctx.close();
  }
}

// A worklist of a thousand flags (WORKLIST_CONSOLE_URL; WANT_TX, WANT_ID: one flag's hash and
// number): pages of 50, the next and last pages, a search by part of a hash, the decorator and
// amount filters, the sort by amount, the CSV of every match.
async function worklist(browser) {
  const url = env('WORKLIST_CONSOLE_URL'), wantTx = env('WANT_TX'), wantId = env('WANT_ID');
  step('a thousand flags, fifty a page');
  const r = await openConsole(browser, url, 'reviewer console');
  await r.page.locator(sel('worklist', '[data-loading="false"]')).waitFor({ timeout: STEP });
  const count = async () => Number(await attr(r.page, 'worklist-count', 'data-count'));
  const ids = () => r.page.locator(sel('flag-row')).evaluateAll((rows) => rows.map((x) => Number(x.dataset.flagId)));
  if ((await count()) !== 1000) throw new Failure(`the worklist counts ${await count()} flags, not 1000`);
  if ((await attr(r.page, 'worklist-page', 'data-pages')) !== '20') throw new Failure(`${await attr(r.page, 'worklist-page', 'data-pages')} pages, not 20`);
  let shown = await ids();
  if (shown.length !== 50 || shown[0] !== 1 || shown[49] !== 50) throw new Failure(`page 1 shows ${shown.length} rows, ${shown[0]} to ${shown[shown.length - 1]}`);
  await r.page.locator(sel('page-next')).click();
  await until(r.page, 'page 2', () => document.querySelector('[data-testid="worklist-page"]').dataset.page === '2');
  shown = await ids();
  if (shown[0] !== 51 || shown[49] !== 100) throw new Failure(`page 2 shows ${shown[0]} to ${shown[49]}`);
  for (let i = 2; i < 20; i += 1) await r.page.locator(sel('page-next')).click();
  await until(r.page, 'the last page', () => document.querySelector('[data-testid="worklist-page"]').dataset.page === '20');
  shown = await ids();
  if (shown.length !== 50 || shown[49] !== 1000) throw new Failure(`the last page shows ${shown.length} rows up to ${shown[shown.length - 1]}`);
  if (!(await r.page.locator(sel('page-next')).isDisabled())) throw new Failure('next is enabled on the last page');
  await shot(r.page, 'console-worklist-thousand');

  step('search by part of a hash, filters, sort, CSV');
  await r.page.locator(sel('worklist-search')).fill(wantTx.slice(10, 26).toLowerCase());
  await until(r.page, 'one flag for that hash', ([id]) => {
    const rows = [...document.querySelectorAll('[data-testid="flag-row"]')];
    return rows.length === 1 && rows[0].dataset.flagId === id;
  }, [wantId]);
  await r.page.locator(sel('worklist-search')).fill('');
  await r.page.locator(sel('filter-decorator')).selectOption('velocity');
  await until(r.page, 'the velocity flags', () => document.querySelector('[data-testid="worklist-count"]').dataset.count === '500');
  await r.page.locator(sel('filter-decorator')).selectOption('');
  await r.page.locator(sel('filter-amount-min')).fill('8100');
  await until(r.page, 'the flags of HKD 8,100 or more', () => document.querySelector('[data-testid="worklist-count"]').dataset.count === '900');
  await r.page.locator(sel('filter-amount-min')).fill('');
  await until(r.page, 'every flag again', () => document.querySelector('[data-testid="worklist-count"]').dataset.count === '1000');
  await r.page.locator(sel('sort-amount')).click();
  await r.page.locator(sel('sort-amount')).click();
  await until(r.page, 'the largest first', () => document.querySelector('[data-testid="flag-row"]').dataset.flagId === '1000');
  const [dl] = await Promise.all([r.page.waitForEvent('download', { timeout: STEP }), r.page.locator(sel('worklist-export-csv')).click()]);
  const csvPath = path.join(artifacts, dl.suggestedFilename());
  await dl.saveAs(csvPath);
  const csv = fs.readFileSync(csvPath, 'utf8').split(/\r?\n/).filter(Boolean);
  if (csv.length !== 1001 || !/^flag_id,status,/.test(csv[0]) || !csv[1].startsWith('1000,')) {
    throw new Failure(`the CSV has ${csv.length} lines, header ${csv[0]}, first ${csv[1]}`);
  }
  note(`1000 flags in 20 pages; search, decorator, amount, sort; CSV of ${csv.length - 1} rows`);
  await r.ctx.close();
}

// ---- main --------------------------------------------------------------------------------------

const phases = { onboarding, review, worklist };
async function main() {
  if (!phases[phase]) {
    console.error(`usage: node e2e.mjs <${Object.keys(phases).join('|')}> (see the top of this file for the environment)`);
    process.exit(2);
  }
  artifacts = path.resolve(env('ARTIFACTS_DIR'));
  fs.mkdirSync(artifacts, { recursive: true });
  const browser = await launch();
  try {
    await phases[phase](browser);
    checkProblems();
    console.log(`[${phase}] passed (${stepNo} steps; screenshots in ${artifacts})`);
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(`[${phase}] FAILED at step ${stepNo}: ${e instanceof Failure ? e.message : e.stack || e}`);
  process.exit(1);
});
