// Shared helpers of the portal and the reviewers' console: the component library (preact + htm,
// vendored, no build step), amounts, times, and the error shape of docs/web-api.md.

import { h, render } from '/assets/vendor/preact/preact.module.js';
import { useState, useEffect, useLayoutEffect, useRef, useCallback, useMemo } from '/assets/vendor/preact/hooks.module.js';
import htm from '/assets/vendor/htm/htm.module.js';

export const html = htm.bind(h);
export { render, useState, useEffect, useLayoutEffect, useRef, useCallback, useMemo };

// Replaces the page's no-script placeholder in #app with the application component.
export function mount(App) {
  const root = document.getElementById('app');
  root.textContent = '';
  root.removeAttribute('data-testid');
  render(html`<${App} />`, root);
}

// ---- errors -------------------------------------------------------------------------------

// An error answer of a server route: `{code, message, ...}` with the HTTP status, or a failure
// to reach the server at all (status 0, code "network").
export class ApiError extends Error {
  constructor(status, body, retryAfterHeader) {
    super((body && body.message) || `HTTP ${status}`);
    this.status = status;
    this.code = (body && body.code) || (status ? `http_${status}` : 'network');
    this.body = body || {};
    const secs = Number(this.body.retry_after_secs ?? retryAfterHeader);
    this.retryAfterSecs = Number.isFinite(secs) && secs > 0 ? secs : null;
  }
}

// fetch + JSON, throwing ApiError on any non-2xx answer (and on a non-JSON body).
export async function fetchJson(url, opts = {}) {
  let resp;
  try {
    resp = await fetch(url, opts);
  } catch (e) {
    throw new ApiError(0, { code: 'network', message: `the server did not answer (${e.message})` });
  }
  let body = null;
  const text = await resp.text();
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = { code: `http_${resp.status}`, message: text.slice(0, 300) };
    }
  }
  if (!resp.ok) throw new ApiError(resp.status, body, resp.headers.get('Retry-After'));
  return body;
}

// An EIP-1193 provider error ({code, message}) as a sentence.
export function walletErrorText(e) {
  const code = e && e.code;
  if (code === 4001) return 'You rejected the request in your wallet.';
  if (code === 4100) return 'The wallet has not authorised this site: connect first.';
  if (code === 4200) return 'The wallet does not support this request.';
  if (code === 4900 || code === 4901) return 'The wallet is not connected to the Lantau chain: add the network first.';
  if (code === 4902) return 'The wallet does not know the Lantau chain yet: add the network first.';
  return `The wallet refused: ${(e && e.message) || String(e)}${code !== undefined ? ` (code ${code})` : ''}`;
}

// Asks the page's EIP-1193 wallet (window.ethereum), turning its refusal into an Error whose text
// is for a person.
export async function walletRequest(method, params) {
  const provider = window.ethereum;
  if (!provider) throw Object.assign(new Error('No wallet: install MetaMask (or another EIP-1193 wallet) to do this.'), { code: 'no_wallet' });
  try {
    return await provider.request(params === undefined ? { method } : { method, params });
  } catch (e) {
    const err = new Error(walletErrorText(e));
    err.code = e && e.code !== undefined ? `wallet_${e.code}` : 'wallet';
    err.walletCode = e && e.code;
    throw err;
  }
}

// A message box. `msg` is null, {kind: 'ok'|'info'|'pending', text, ...} or {kind: 'error', error}.
// `testid` names the box; data-state carries the kind and data-code the error's code.
export function Message({ msg, testid }) {
  if (!msg) return html`<div class="msg msg-empty" data-testid=${testid} data-state="empty" hidden></div>`;
  if (msg.kind === 'error') {
    const e = msg.error || {};
    const b = e.body || {};
    return html`<div class="msg msg-error" role="alert" data-testid=${testid} data-state="error" data-code=${e.code || ''} ...${msg.attrs || {}}>
      <div class="msg-title">${msg.title || 'Refused'}</div>
      <div class="msg-text" data-testid=${`${testid}-message`}>${e.message || String(e)}</div>
      <div class="msg-meta">
        ${e.status ? html`<span>HTTP ${e.status}</span>` : null}
        ${e.code ? html`<span>code <code data-testid=${`${testid}-code`}>${e.code}</code></span>` : null}
        ${e.retryAfterSecs ? html`<span data-testid=${`${testid}-retry`}>try again in ${e.retryAfterSecs} s</span>` : null}
      </div>
      ${b.tx_code !== undefined || b.raw_log ? html`<dl class="kv small">
        ${b.tx_hash ? html`<dt>tx</dt><dd><code class="hash">${b.tx_hash}</code></dd>` : null}
        <dt>tx_code</dt><dd><code data-testid=${`${testid}-tx-code`}>${String(b.tx_code ?? '')}</code></dd>
        <dt>codespace</dt><dd><code data-testid=${`${testid}-codespace`}>${b.codespace || ''}</code></dd>
        <dt>raw_log</dt><dd><pre class="rawlog" data-testid=${`${testid}-raw-log`}>${b.raw_log || ''}</pre></dd>
      </dl>` : null}
    </div>`;
  }
  return html`<div class=${`msg msg-${msg.kind}`} role="status" data-testid=${testid} data-state=${msg.kind} ...${msg.attrs || {}}>
    ${msg.kind === 'pending' ? html`<span class="spinner" aria-hidden="true"></span>` : null}
    <span class="msg-text" data-testid=${`${testid}-message`}>${msg.text}</span>
    ${msg.extra || null}
  </div>`;
}

export const errorMsg = (error, title) => ({ kind: 'error', error, title });

// ---- amounts -------------------------------------------------------------------------------

// "123456" with 2 decimals → "1,234.56"; exact on big integers (BigInt), `maxFrac` trims.
export function formatUnits(amount, decimals, maxFrac = decimals) {
  let s = String(amount ?? '0').trim();
  if (!/^-?\d+$/.test(s)) return s;
  const neg = s.startsWith('-');
  if (neg) s = s.slice(1);
  s = s.padStart(decimals + 1, '0');
  const int = s.slice(0, s.length - decimals);
  let frac = decimals ? s.slice(s.length - decimals) : '';
  if (maxFrac < decimals) frac = frac.slice(0, maxFrac);
  if (decimals > 2) frac = frac.replace(/0+$/, '');
  const grouped = BigInt(int).toLocaleString('en-US');
  return `${neg ? '-' : ''}${grouped}${frac ? '.' + frac : ''}`;
}

// "12.5" HKD → "1250" (cents); null when not a valid amount with at most `decimals` decimals.
export function parseUnits(text, decimals) {
  const t = String(text || '').trim().replace(/,/g, '');
  const m = /^(\d+)(?:\.(\d*))?$/.exec(t);
  if (!m) return null;
  const frac = m[2] || '';
  if (frac.length > decimals) return null;
  const v = BigInt(m[1] + frac.padEnd(decimals, '0'));
  return v.toString();
}

export const formatHkd = (cents) => `HKD ${formatUnits(cents, 2)}`;
export const formatNative = (base) => `${formatUnits(base, 18, 6)} LANTAU`;

// A Coin {denom, amount}: stablecoins (hkd.*) with 2 decimals, the native coin with 18.
export function formatCoin(coin) {
  if (!coin || coin.amount === undefined || coin.amount === '') return '';
  const d = coin.denom || '';
  if (d.startsWith('hkd.')) return formatHkd(coin.amount);
  if (d === 'alantau') return formatNative(coin.amount);
  return `${coin.amount} ${d}`;
}

// ---- times ---------------------------------------------------------------------------------

// RFC 3339 → "2026-11-24 11:35:56 UTC".
export function formatUtc(ts) {
  if (!ts) return '';
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return String(ts);
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC').replace(/Z$/, ' UTC');
}

// Seconds → "4m10s", "3h05m", "2d04h".
export function formatDuration(secs) {
  if (secs === null || secs === undefined || !Number.isFinite(secs)) return '';
  secs = Math.max(0, Math.floor(secs));
  const d = Math.floor(secs / 86400), hh = Math.floor((secs % 86400) / 3600), m = Math.floor((secs % 3600) / 60), s = secs % 60;
  const p2 = (n) => String(n).padStart(2, '0');
  if (d) return `${d}d${p2(hh)}h`;
  if (hh) return `${hh}h${p2(m)}m`;
  if (m) return `${m}m${p2(s)}s`;
  return `${s}s`;
}

export const ageOf = (ts, now = Date.now()) => formatDuration((now - new Date(ts).getTime()) / 1000);

// A datetime-local input's value read as UTC → RFC 3339 ("" stays "").
export function localInputToUtc(value) {
  if (!value) return '';
  const v = value.length === 16 ? `${value}:00` : value;
  return `${v}Z`;
}

// RFC 3339 → a datetime-local value in UTC.
export const utcToLocalInput = (date) => new Date(date).toISOString().slice(0, 16);

// ---- misc ----------------------------------------------------------------------------------

export const shortHash = (h) => (h && h.length > 16 ? `${h.slice(0, 8)}…${h.slice(-6)}` : h || '');
export const shortAddr = (a) => (a && a.length > 20 ? `${a.slice(0, 12)}…${a.slice(-6)}` : a || '');

// A full value in a title attribute with a shortened text: readable on a phone, copyable.
export function Mono({ value, short = shortAddr, testid }) {
  return html`<code class="mono" title=${value || ''} data-testid=${testid} data-value=${value || ''}>${short(value)}</code>`;
}

export const isHexAddress = (a) => /^0x[0-9a-fA-F]{40}$/.test(a || '');
export const isBech32Address = (a) => /^lantau1[02-9ac-hj-np-z]{38,}$/.test(a || '');

// UTF-8 text → 0x hex (what personal_sign is given).
export function utf8ToHex(text) {
  const bytes = new TextEncoder().encode(text);
  let out = '0x';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

// Rows → CSV text (RFC 4180 quoting), with a header line.
export function toCsv(columns, rows) {
  const q = (v) => {
    const s = v === null || v === undefined ? '' : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(q).join(','), ...rows.map((r) => columns.map((c) => q(r[c])).join(','))].join('\r\n') + '\r\n';
}

// Offers `text` as a file download.
export function download(filename, text, type = 'text/csv') {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
