// The compliance desk (docs/web-api.md, "Reviewers' console"): one service the team shares.
// Everything shown comes from the node's queries through the console's /api routes, except the
// notes and their attachments, which the service keeps. Actions are signed with the key the
// service holds for the signed-in person and answered only once included in a block.
//
// A person signs in with their wallet (Sign-In with Ethereum: eth_requestAccounts, a challenge,
// personal_sign), or opens the URL `lantaud console --key` printed (a token in the fragment). The
// session token is kept in sessionStorage (removed from the address bar); every /api call sends
// `Authorization: Bearer`, every POST `X-CSRF-Token`. An expired session asks to sign in again.
//
// Stable hooks for tests (data-testid, unless marked):
//   console-app             root; data-ready="true" once the session is known; data-role
//   signin                  the sign-in panel (no session): signin-wallet (button), signin-error
//   session-error           shown when the session is refused
//   session-address, session-role, session-key-name, session-label, session-chain, session-expires
//   session-read-only       shown when the service holds no key for the person; signout (button)
//   tab-worklist, tab-case, tab-dashboards, tab-audit      tab buttons (aria-selected)
//   -- Worklist
//   worklist                section; data-loading="true|false"
//   filter-status           select: FLAG_STATUS_EMITTED | FLAG_STATUS_PENDING_OFFICER | … | "" (all)
//   filter-vasp, filter-from, filter-to (datetime-local, read as UTC)
//   worklist-refresh        button
//   worklist-search         text: subject, counterparty, tx hash, VASP or flag id (any case, part of it)
//   filter-decorator        select: any | a decorator the loaded flags carry
//   filter-amount-min, filter-amount-max   display units (HKD), inclusive
//   sort-<key>              column header buttons (flag_id, status, amount, created_at); data-dir asc|desc
//   worklist-count          number of flags matching (data-count; every page)
//   worklist-page           "page N of M" (data-page, data-pages); page-prev, page-next; 50 rows a page
//   worklist-export-csv     the matching flags, every page, as CSV
//   worklist-error          message box
//   flag-row                one per flag: data-flag-id, data-tx-hash (as the node gives it), data-status
//   open-case               button in a flag-row
//   -- Case (one flag)
//   case-view               data-flag-id, data-loading
//   case-error              message box
//   case-flag-status        data-status (FLAG_STATUS_…)
//   case-transfer           the transaction (from the node's tx query) or why it is absent
//   case-trace              section; trace-source (data-source tx_trace|simulate_trace|unavailable) is its label
//   trace-row               one per gate: data-gate, data-status
//   case-travel-rule        the Travel Rule payload (travel-rule-originator-ref …)
//   case-identity           the subject's identity record
//   case-timeline           the subject's audit history; timeline-row (data-tx-type, data-sequence)
//   case-earlier-flags      earlier-flag-row (data-flag-id), open-earlier-flag buttons
//   case-notes              the desk's notes on the flag: note-row (data-author), note-text,
//                           note-attachment (a button that downloads it; data-sha256)
//   case-actions            action-note (textarea: note / evidence), action-attachment (file input,
//                           kept with an escalation's note), action-approve, action-block,
//                           action-escalate (reviewer, EMITTED), action-close-approved,
//                           action-close-blocked (officer, PENDING_OFFICER); no-actions otherwise
//   confirm-dialog          action-confirm, action-cancel
//   action-result           message box: data-state pending|ok|error; while pending a spinner;
//                           ok: action-tx-hash (data-value), action-height;
//                           error: action-result-code, action-result-tx-code,
//                           action-result-codespace, action-result-raw-log
//   -- Proposals (groups the key is a member of)
//   tab-proposals           tab button; its label counts the proposals awaiting the key's vote
//   proposals               section; data-loading; proposals-error; proposals-refresh
//   group-panel             one per group: data-group (address), data-threshold
//   proposal-row            one per open proposal: data-proposal-id, data-status, data-my-vote
//   proposal-message        one per message (its JSON); proposal-tally (data-yes, data-threshold)
//   proposal-approve, proposal-reject, proposal-abstain   buttons (disabled once the key voted)
//   proposal-confirm, proposal-cancel (the confirm dialog); proposal-result (message box)
//   -- Dashboards
//   dashboards              data-ready="true" once drawn; dash-range (select, days)
//   dash-tiles, chart-flags-per-day, chart-resolution-time, chart-volume-hourly,
//   chart-velocity, chart-events (canvases), dash-events (list), dash-error
//   -- Audit log
//   audit                   section
//   audit-subject, audit-tx-type, audit-tx-hash, audit-from, audit-to, audit-search
//   audit-count (data-count), audit-row (data-sequence, data-tx-type, data-tx-hash), audit-export-csv,
//   audit-export-verifiable (the node's audit export of the From/To range, for `lantaud audit verify`), audit-error
//   report-start, report-end, report-run, report-section (data-name, data-rows), report-export-csv, report-error

import {
  mount,
  html, useState, useEffect, useLayoutEffect, useRef, useMemo, useCallback,
  fetchJson, Message, errorMsg, formatCoin, formatHkd, formatUtc, ageOf, formatDuration,
  localInputToUtc, utcToLocalInput, shortHash, shortAddr, Mono, toCsv, download, walletRequest, utf8ToHex,
} from '/assets/common/ui.js';

// ---- session and API ----------------------------------------------------------------------------

const TOKEN_KEY = 'lantau.console.token';

function takeToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

const api = {
  token: takeToken(),
  csrf: null,
  // Called when the service says the session is over (expired, signed out elsewhere).
  onSessionEnd: null,
  async call(url, opts) {
    try {
      return await fetchJson(url, opts);
    } catch (e) {
      if (e.status === 401 && this.onSessionEnd) this.onSessionEnd(e);
      throw e;
    }
  },
  async get(path, params) {
    const q = params ? new URLSearchParams(Object.entries(params).filter(([, v]) => v !== '' && v !== null && v !== undefined)).toString() : '';
    return this.call(`/api/${path}${q ? `?${q}` : ''}`, { headers: { Authorization: `Bearer ${this.token}`, Accept: 'application/json' } });
  },
  async blob(path) {
    const resp = await fetch(`/api/${path}`, { headers: { Authorization: `Bearer ${this.token}` } });
    if (!resp.ok) throw new Error(`the service answered ${resp.status}`);
    return resp.blob();
  },
  async post(path, body) {
    return this.call(`/api/${path}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${this.token}`, 'X-CSRF-Token': this.csrf || '', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  },
};

// ---- helpers ---------------------------------------------------------------------------------

const STATUSES = ['FLAG_STATUS_EMITTED', 'FLAG_STATUS_PENDING_OFFICER', 'FLAG_STATUS_RESOLVED_APPROVED', 'FLAG_STATUS_RESOLVED_BLOCKED'];
const statusShort = (s) => String(s || '').replace('FLAG_STATUS_', '');
const StatusBadge = ({ status, testid }) => html`<span class=${`badge badge-${statusShort(status)}`} data-testid=${testid} data-status=${status}>${statusShort(status) || '—'}</span>`;
const gateShort = (s) => String(s || '').replace('DECORATOR_RESULT_', '');
const ENFORCEMENT = new Set(['blacklist', 'freeze', 'unfreeze', 'pause', 'unpause', 'mint', 'burn', 'identity_enrolled', 'level_change', 'sanctions_update', 'rule_update', 'sanctions']);
const KNOWN_TX_TYPES = ['transfer', 'threshold_flag', 'velocity_flag', 'flag_review', 'flag_escalate', 'flag_close', 'sanctions_update', 'rule_update',
  'group_create', 'group_update', 'group_proposal', 'group_vote', 'group_exec', 'sub_role_bound', 'sub_role_revoked', 'agent_policy_update', 'blacklist', 'freeze', 'unfreeze', 'pause', 'unpause', 'mint', 'burn', 'identity_enrolled', 'level_change', 'sanctions'];
const ms = (ts) => new Date(ts).getTime();
const byAge = (a, b) => (ms(a.created_at) - ms(b.created_at)) || (Number(a.block_height) - Number(b.block_height)) || (Number(a.flag_id) - Number(b.flag_id));
const cleanHash = (h) => String(h || '').replace(/^0x/i, '').toUpperCase();

// Re-renders every `ms` (for ages).
function useTick(ms) {
  const [, set] = useState(0);
  useEffect(() => {
    const t = setInterval(() => set((n) => n + 1), ms);
    return () => clearInterval(t);
  }, [ms]);
}

function Kv({ rows, testid }) {
  return html`<dl class="kv" data-testid=${testid}>${rows.filter(Boolean).map(([k, v, id]) => html`<dt>${k}</dt><dd data-testid=${id}>${v}</dd>`)}</dl>`;
}

// ---- worklist ---------------------------------------------------------------------------------

const PAGE = 50;
const FLAG_COLUMNS = ['flag_id', 'status', 'decorator', 'subject', 'counterparty', 'amount', 'denom', 'amount_display', 'vasp', 'created_at', 'tx_hash'];
const flagCsvRow = (f) => ({
  flag_id: f.flag_id, status: f.status, decorator: f.decorator, subject: f.subject, counterparty: f.counterparty,
  amount: f.amount ? f.amount.amount : '', denom: f.amount ? f.amount.denom : '', amount_display: f.amount ? formatCoin(f.amount) : '',
  vasp: f.vasp, created_at: f.created_at, tx_hash: f.tx_hash,
});
// Display units of a coin (HKD with its decimals), for the amount range.
const displayAmount = (c, decimals) => (c && c.amount ? Number(c.amount) / 10 ** decimals : 0);
const SORTS = {
  flag_id: (a, b) => Number(a.flag_id) - Number(b.flag_id),
  status: (a, b) => String(a.status).localeCompare(String(b.status)) || byAge(a, b),
  amount: (a, b) => Number((a.amount && a.amount.amount) || 0) - Number((b.amount && b.amount.amount) || 0) || byAge(a, b),
  created_at: byAge,
};

function Worklist({ session, filters, setFilters, onOpen }) {
  const [flags, setFlags] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);
  const [q, setQ] = useState({ text: '', decorator: '', min: '', max: '' });
  const [sort, setSort] = useState({ key: 'created_at', dir: 'asc' });
  const [page, setPage] = useState(0);
  useTick(30000);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const r = await api.get('flags', { status: filters.status, vasp: filters.vasp.trim(), from: localInputToUtc(filters.from), to: localInputToUtc(filters.to) });
      setFlags((r.flags || []).slice());
      setError(null);
    } catch (e) {
      setError(errorMsg(e, 'The flags could not be read'));
    } finally {
      setLoading(false);
    }
  }, [filters.status, filters.vasp, filters.from, filters.to]);

  useEffect(() => { load(); }, [filters.status]);

  const decimals = (session.hkd && Number(session.hkd.decimals)) || 0;
  const vasps = useMemo(() => [...new Set((flags || []).map((f) => f.vasp).filter(Boolean))].sort(), [flags]);
  const decorators = useMemo(() => [...new Set((flags || []).map((f) => f.decorator).filter(Boolean))].sort(), [flags]);
  // Search, the decorator and the amount range narrow what the node answered; then the sort.
  const matching = useMemo(() => {
    const text = q.text.trim().toLowerCase().replace(/^0x/, '');
    const min = q.min === '' ? null : Number(q.min);
    const max = q.max === '' ? null : Number(q.max);
    const out = (flags || []).filter((f) => {
      if (text && ![f.subject, f.counterparty, f.tx_hash, f.vasp, String(f.flag_id)].some((v) => String(v || '').toLowerCase().includes(text))) return false;
      if (q.decorator && f.decorator !== q.decorator) return false;
      const amt = displayAmount(f.amount, decimals);
      if (min !== null && amt < min) return false;
      if (max !== null && amt > max) return false;
      return true;
    });
    out.sort(SORTS[sort.key] || byAge);
    if (sort.dir === 'desc') out.reverse();
    return out;
  }, [flags, q, sort, decimals]);
  const pages = Math.max(1, Math.ceil(matching.length / PAGE));
  const at = Math.min(page, pages - 1);
  const shown = matching.slice(at * PAGE, at * PAGE + PAGE);
  useEffect(() => { setPage(0); }, [q, sort, flags]);

  const set = (k) => (e) => setFilters({ ...filters, [k]: e.target.value });
  const setSearch = (k) => (e) => setQ({ ...q, [k]: e.target.value });
  const sortBy = (key) => setSort(sort.key === key ? { key, dir: sort.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: 'asc' });
  const SortHead = ({ k, label, cls }) => html`<th class=${cls || ''} aria-sort=${sort.key === k ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
    <button type="button" class="link" data-testid=${`sort-${k}`} data-dir=${sort.key === k ? sort.dir : ''} onClick=${() => sortBy(k)}>${label}${sort.key === k ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</button></th>`;

  return html`<section class="panel" data-testid="worklist" data-loading=${loading ? 'true' : 'false'}>
    <h2>Worklist <span class="muted small">${session.role === 'officer' ? 'officers close escalated flags' : session.role === 'reviewer' ? 'reviewers decide raised flags' : ''}</span></h2>
    <form class="row" onSubmit=${(e) => { e.preventDefault(); load(); }}>
      <label>Status
        <select data-testid="filter-status" value=${filters.status} onChange=${set('status')}>
          ${STATUSES.map((s) => html`<option value=${s}>${statusShort(s)}</option>`)}
          <option value="">all</option>
        </select></label>
      <label>VASP (exact; velocity flags have none)
        <input data-testid="filter-vasp" list="vasp-list" value=${filters.vasp} onInput=${set('vasp')} placeholder="any" />
        <datalist id="vasp-list">${vasps.map((v) => html`<option value=${v} />`)}</datalist></label>
      <label>From (UTC)<input type="datetime-local" data-testid="filter-from" value=${filters.from} onInput=${set('from')} /></label>
      <label>To (UTC, exclusive)<input type="datetime-local" data-testid="filter-to" value=${filters.to} onInput=${set('to')} /></label>
      <div class="actions"><button type="submit" data-testid="worklist-refresh" disabled=${loading}>${loading ? 'Loading…' : 'Apply / refresh'}</button></div>
    </form>
    <div class="row" role="search">
      <label style="flex:2 1 16rem">Search (subject, counterparty, tx hash, VASP, flag #)
        <input type="search" data-testid="worklist-search" value=${q.text} onInput=${setSearch('text')} placeholder="part of an address or hash" spellcheck="false" /></label>
      <label>Decorator
        <select data-testid="filter-decorator" value=${q.decorator} onChange=${setSearch('decorator')}>
          <option value="">any</option>
          ${decorators.map((d) => html`<option value=${d}>${d}</option>`)}
        </select></label>
      <label>Amount from (HKD)<input type="number" min="0" step="any" data-testid="filter-amount-min" value=${q.min} onInput=${setSearch('min')} /></label>
      <label>Amount to (HKD)<input type="number" min="0" step="any" data-testid="filter-amount-max" value=${q.max} onInput=${setSearch('max')} /></label>
      <div class="actions"><button type="button" class="secondary" data-testid="worklist-export-csv" disabled=${!matching.length}
        onClick=${() => download(`flags-${stamp()}.csv`, toCsv(FLAG_COLUMNS, matching.map(flagCsvRow)))}>Export CSV</button></div>
    </div>
    <${Message} testid="worklist-error" msg=${error} />
    <p class="small muted" style="margin:.6rem 0">
      <span data-testid="worklist-count" data-count=${flags ? matching.length : ''}>${flags ? matching.length : '…'}</span> flags match
      ${flags && matching.length !== flags.length ? ` (of ${flags.length} loaded)` : ''}.${' '}
      <span data-testid="worklist-page" data-page=${at + 1} data-pages=${pages}>Page ${at + 1} of ${pages}</span>
      <button type="button" class="link" data-testid="page-prev" disabled=${at === 0} onClick=${() => setPage(at - 1)}>‹ previous</button>
      <button type="button" class="link" data-testid="page-next" disabled=${at >= pages - 1} onClick=${() => setPage(at + 1)}>next ›</button></p>
    <div class="table-wrap">
      <table class="cards worklist">
        <thead><tr><th></th><${SortHead} k="flag_id" label="#" /><${SortHead} k="status" label="status" /><th>decorator</th><th>subject</th><th>counterparty</th><${SortHead} k="amount" label="amount" cls="num" /><th>VASP</th><${SortHead} k="created_at" label="raised (UTC)" /><th>age</th><th>tx</th></tr></thead>
        <tbody>
          ${shown.map((f) => html`<tr class="clickable" data-testid="flag-row" data-flag-id=${f.flag_id} data-tx-hash=${f.tx_hash} data-status=${f.status} onClick=${() => onOpen(f.flag_id)}>
            <td data-label=""><button class="secondary" data-testid="open-case" onClick=${(e) => { e.stopPropagation(); onOpen(f.flag_id); }}>Open</button></td>
            <td data-label="#">${f.flag_id}</td>
            <td data-label="status"><${StatusBadge} status=${f.status} /></td>
            <td data-label="decorator">${f.decorator}</td>
            <td data-label="subject"><${Mono} value=${f.subject} short=${shortAddr} /></td>
            <td data-label="counterparty"><${Mono} value=${f.counterparty} short=${shortAddr} /></td>
            <td data-label="amount" class="num">${formatCoin(f.amount)}</td>
            <td data-label="VASP">${f.vasp || html`<span class="muted">—</span>`}</td>
            <td data-label="raised (UTC)">${formatUtc(f.created_at).replace(/ UTC$/, '')}</td>
            <td data-label="age">${ageOf(f.created_at)}</td>
            <td data-label="tx"><${Mono} value=${f.tx_hash} short=${shortHash} /></td>
          </tr>`)}
        </tbody>
      </table>
      ${flags && !matching.length ? html`<div class="empty">No flags match.</div>` : null}
    </div>
  </section>`;
}

// ---- case -------------------------------------------------------------------------------------

function Transfer({ tx, flag }) {
  if (!tx) return html`<p class="muted">The node has no record of transaction <code class="hash">${flag.tx_hash}</code> (its tx query answered nothing).</p>`;
  const msgs = (tx.tx && tx.tx.body && tx.tx.body.messages) || [];
  return html`<div>
    <${Kv} rows=${[
      ['tx', html`<code class="hash">${tx.txhash}</code>`],
      ['height', tx.height],
      ['time', `${formatUtc(tx.timestamp)} (${ageOf(tx.timestamp)} ago)`],
      ['result', tx.code ? html`<span class="badge badge-err">code ${tx.code} ${tx.codespace}</span> <pre class="rawlog">${tx.raw_log}</pre>` : html`<span class="badge badge-ok">executed (code 0)</span>`],
      ['gas', `${tx.gas_used || '?'} used of ${tx.gas_wanted || '?'}`],
    ]} />
    ${msgs.map((m) => html`<div class="small" style="margin-top:.4rem"><code>${m['@type']}</code>
      ${m.from_address ? html` <${Mono} value=${m.from_address} /> → <${Mono} value=${m.to_address} /> ${(m.amount || []).map(formatCoin).join(', ')}` : null}</div>`)}
  </div>`;
}

function Trace({ trace }) {
  const t = trace || { source: 'unavailable', label: 'No trace.' };
  const rows = (t.trace && t.trace.results) || [];
  const cls = t.source === 'tx_trace' ? '' : t.source === 'simulate_trace' ? 'simulated' : 'unavailable';
  const title = t.source === 'tx_trace' ? 'Live trace (TxTrace)' : t.source === 'simulate_trace' ? 'Rebuilt by SimulateTrace — not the live run' : 'Trace unavailable';
  return html`<div>
    <div class=${`label-box ${cls}`} data-testid="trace-source" data-source=${t.source}><strong>${title}.</strong> ${t.label}</div>
    ${t.trace ? html`<p class="small">accepted: <strong data-testid="trace-accepted">${t.trace.accepted ? 'yes' : 'no'}</strong></p>
      <div class="table-wrap"><table class="cards">
        <thead><tr><th>#</th><th>gate</th><th>result</th><th>kind</th><th>reason</th><th class="num">gas</th></tr></thead>
        <tbody>${rows.map((r, i) => html`<tr class=${`status-${gateShort(r.status)}`} data-testid="trace-row" data-gate=${r.name} data-status=${r.status}>
          <td data-label="#">${i + 1}</td><td data-label="gate"><code>${r.name}</code></td><td data-label="result"><strong>${gateShort(r.status)}</strong></td>
          <td data-label="kind">${r.blocking ? 'blocking' : 'advisory'}</td><td data-label="reason" class="wrap">${r.reason}</td><td data-label="gas" class="num">${r.gas_used}</td></tr>`)}</tbody>
      </table></div>` : null}
  </div>`;
}

// Every row that is not a plain transfer is always shown (flags, reviews, enforcement); of the
// transfers, the latest TIMELINE_TRANSFERS unless the reader asks for all.
const TIMELINE_TRANSFERS = 20;
function Timeline({ entries, subject }) {
  const [all, setAll] = useState(false);
  const sorted = (entries || []).slice().sort((a, b) => Number(a.sequence) - Number(b.sequence));
  if (!sorted.length) return html`<p class="muted">No audit rows for this subject.</p>`;
  const transfers = sorted.filter((e) => e.tx_type === 'transfer');
  const keep = new Set(all ? transfers : transfers.slice(-TIMELINE_TRANSFERS));
  const list = sorted.filter((e) => e.tx_type !== 'transfer' || keep.has(e));
  const hidden = transfers.length - keep.size;
  return html`<div>
    <p class="small muted" data-testid="timeline-summary">${sorted.length} rows, ${sorted.length - transfers.length} of them flags, reviews and enforcement (all shown)${hidden ? `; ${hidden} older transfers hidden` : ''}.
      ${transfers.length > TIMELINE_TRANSFERS ? html` <button class="secondary" data-testid="timeline-show-all" onClick=${() => setAll(!all)}>${all ? 'Latest transfers only' : `Show all ${transfers.length} transfers`}</button>` : null}</p>
    <ol class="timeline">${list.map((e) => {
    const kind = ENFORCEMENT.has(e.tx_type) ? 'enforcement' : /flag/.test(e.tx_type) ? 'flag' : '';
    const meta = Object.entries(e.metadata || {});
    return html`<li class=${kind} data-testid="timeline-row" data-tx-type=${e.tx_type} data-sequence=${e.sequence}>
      <div><strong>${e.tx_type}</strong> <span class="muted small">${formatUtc(e.block_time)} · height ${e.block_height} · #${e.sequence}</span></div>
      <div class="small">${e.subject === subject ? 'as subject' : 'as counterparty'}${e.amount ? ` · ${formatCoin(e.amount)}` : ''}
        ${e.counterparty && e.subject === subject ? html` · counterparty <${Mono} value=${e.counterparty} />` : null}
        ${e.subject !== subject ? html` · subject <${Mono} value=${e.subject} />` : null}
        ${e.tx_hash ? html` · tx <${Mono} value=${e.tx_hash} short=${shortHash} />` : null}</div>
      ${meta.length ? html`<div class="small muted">${meta.map(([k, v]) => html`<span style="margin-right:.6rem">${k}=<code>${v.length > 24 ? shortHash(v) : v}</code></span>`)}</div>` : null}
    </li>`;
  })}</ol></div>`;
}

// What the key's role may do with a flag in `status`.
function allowedActions(role, status) {
  if (role === 'reviewer' && status === 'FLAG_STATUS_EMITTED') {
    return [
      { id: 'action-approve', label: 'Approve', cls: 'okay', path: 'review', body: (n) => ({ decision: 'APPROVED', evidence: n }), what: 'MsgReviewFlag, decision APPROVED (the flag is cleared)' },
      { id: 'action-block', label: 'Block', cls: 'danger', path: 'review', body: (n) => ({ decision: 'BLOCKED', evidence: n }), what: 'MsgReviewFlag, decision BLOCKED (the subject is blacklisted)' },
      { id: 'action-escalate', label: 'Escalate to officer', cls: 'secondary', path: 'escalate', needsNote: true, body: (n) => ({ note: n }), what: 'MsgEscalateFlag (the flag goes to an officer with your note)' },
    ];
  }
  if (role === 'officer' && status === 'FLAG_STATUS_PENDING_OFFICER') {
    return [
      { id: 'action-close-approved', label: 'Close: approved', cls: 'okay', path: 'close', body: (n) => ({ decision: 'APPROVED', evidence: n }), what: 'MsgCloseFlag, decision APPROVED' },
      { id: 'action-close-blocked', label: 'Close: blocked', cls: 'danger', path: 'close', body: (n) => ({ decision: 'BLOCKED', evidence: n }), what: 'MsgCloseFlag, decision BLOCKED (the subject is blacklisted)' },
    ];
  }
  return [];
}

// A file as {name, content_base64} (read in the browser).
function readAttachment(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve({ name: file.name, content_base64: String(r.result).replace(/^data:[^,]*,/, '') });
    r.onerror = () => reject(new Error(`could not read ${file.name}`));
    r.readAsDataURL(file);
  });
}

function Actions({ session, flag, onDone }) {
  const [note, setNote] = useState('');
  const [files, setFiles] = useState([]);
  const [pending, setPending] = useState(null); // the action awaiting confirmation
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const actions = allowedActions(session.role, flag.status);

  async function run(a) {
    setPending(null);
    setBusy(true);
    setResult({ kind: 'pending', text: `Signing and broadcasting ${a.what.split(' ')[0]}; waiting until it is in a block…` });
    try {
      const body = a.body(note.trim());
      if (a.path === 'escalate' && files.length) body.attachments = await Promise.all(files.map(readAttachment));
      const r = await api.post(`flags/${encodeURIComponent(flag.flag_id)}/${a.path}`, body);
      setResult({
        kind: 'ok', text: `Done: ${a.label.toLowerCase()} for flag #${flag.flag_id} is on chain.`, attrs: { 'data-tx-hash': r.tx_hash },
        extra: html`<div class="small">tx <code class="hash" data-testid="action-tx-hash" data-value=${r.tx_hash}>${r.tx_hash}</code> at height <span data-testid="action-height">${r.height}</span></div>`,
      });
      setNote('');
      setFiles([]);
      onDone();
    } catch (e) {
      setResult(errorMsg(e, `${a.label}: refused`));
      // The chain's refusal often means the flag moved meanwhile: show its state as it is now.
      if (e.code === 'tx_refused') onDone();
    } finally {
      setBusy(false);
    }
  }

  return html`<section class="panel" data-testid="case-actions">
    <h2>Actions <span class="badge badge-role">${session.role || 'no role'}</span></h2>
    ${actions.length ? html`<div class="form">
        <label>Note / evidence (kept by the desk for the team; the chain records its SHA-256)${actions.some((a) => a.needsNote) ? ' — an escalation needs one' : ''}
          <textarea data-testid="action-note" value=${note} onInput=${(e) => setNote(e.target.value)} placeholder="What you checked and why"></textarea></label>
        ${actions.some((a) => a.path === 'escalate') ? html`<label>Attachments for the officer (kept by the desk with the note; up to 4 files of 256 KiB)
          <input type="file" multiple data-testid="action-attachment" onChange=${(e) => setFiles([...e.target.files].slice(0, 4))} /></label>` : null}
        <div class="actions">${actions.map((a) => html`<button class=${a.cls} data-testid=${a.id} disabled=${busy || (a.needsNote && !note.trim())}
            title=${a.needsNote && !note.trim() ? 'Write a note first' : a.what} onClick=${() => setPending(a)}>${a.label}</button>`)}</div>
      </div>`
    : html`<p class="muted" data-testid="no-actions">${!session.can_act ? 'The desk holds no key for you: you can read, not act.' : session.role
        ? `No action for a ${session.role} on a ${statusShort(flag.status)} flag: reviewers act on EMITTED flags, officers close PENDING_OFFICER ones.`
        : 'This key holds no reviewer or officer binding: it can read, not act.'}</p>`}
    <${Message} testid="action-result" msg=${result} />
    ${pending ? html`<div class="dialog-backdrop" data-testid="confirm-dialog">
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="confirm-title">
        <h2 id="confirm-title">${pending.label} flag #${flag.flag_id}?</h2>
        <p>The console signs <strong>${pending.what}</strong> with <code>${session.key_name}</code> and broadcasts it. It cannot be undone.</p>
        ${note.trim() ? html`<p class="small">Note: <em>${note.trim().slice(0, 300)}</em></p>` : html`<p class="small muted">No note.</p>`}
        <div class="actions">
          <button class=${pending.cls === 'secondary' ? '' : pending.cls} data-testid="action-confirm" onClick=${() => run(pending)}>Sign and send</button>
          <button class="secondary" data-testid="action-cancel" onClick=${() => setPending(null)}>Cancel</button>
        </div>
      </div></div>` : null}
  </section>`;
}

function CaseView({ session, id, onOpen }) {
  const [c, setC] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      setC(await api.get(`case/${encodeURIComponent(id)}`));
      setError(null);
    } catch (e) {
      setError(errorMsg(e, `Flag ${id} could not be read`));
    } finally {
      setLoading(false);
    }
  }, [id]);
  useEffect(() => { setC(null); load(); }, [id]);

  if (!c) return html`<section class="panel" data-testid="case-view" data-flag-id=${id} data-loading=${loading ? 'true' : 'false'}>
    <h2>Flag #${id}</h2>${loading ? html`<div class="msg msg-pending"><span class="spinner"></span> Loading the case…</div>` : null}
    <${Message} testid="case-error" msg=${error} /></section>`;

  const f = c.flag;
  const p = c.travel_rule_payload;
  const id_ = c.identity;
  return html`<div data-testid="case-view" data-flag-id=${f.flag_id} data-loading=${loading ? 'true' : 'false'}>
    <${Message} testid="case-error" msg=${error} />
    <div class="grid">
      <section class="panel span-2" data-testid="case-flag">
        <h2>Flag #${f.flag_id} <${StatusBadge} status=${f.status} testid="case-flag-status" /> <span class="badge">${f.decorator}</span>
          <button class="secondary" style="margin-left:auto" data-testid="case-reload" onClick=${load} disabled=${loading}>Reload</button></h2>
        <${Kv} rows=${[
          ['amount', html`<strong>${formatCoin(f.amount)}</strong>`],
          ['subject', html`<code class="hash" data-testid="case-subject">${f.subject}</code>`],
          ['counterparty', html`<code class="hash">${f.counterparty}</code>`],
          ['VASP', f.vasp || html`<span class="muted">none${f.decorator === 'velocity' ? ' (velocity flags carry none)' : ''}</span>`],
          ['raised', `${formatUtc(f.created_at)} (${ageOf(f.created_at)} ago) at height ${f.block_height}`],
          f.updated_at && f.updated_at !== f.created_at ? ['last change', formatUtc(f.updated_at)] : null,
          ['tx', html`<code class="hash" data-testid="case-tx-hash">${f.tx_hash}</code>`],
          f.resolution ? ['resolution', f.resolution] : null,
          f.proposed_decision ? ['reviewer proposes', html`<strong data-testid="case-proposed">${f.proposed_decision}</strong> (an officer decides: four eyes on BLOCKED)`] : null,
          f.reviewer ? ['reviewer', html`<code class="hash">${f.reviewer}</code>`] : null,
          f.officer ? ['officer', html`<code class="hash">${f.officer}</code>`] : null,
          f.evidence_hash ? ['evidence hash', html`<code class="hash">${f.evidence_hash}</code>`] : null,
          f.officer_note_hash ? ['note hash', html`<code class="hash">${f.officer_note_hash}</code>`] : null,
        ]} />
      </section>
      <${Actions} session=${session} flag=${f} onDone=${load} />
      <section class="panel" data-testid="case-notes">
        <h2>Notes</h2>
        ${(c.notes || []).length ? html`<ul>${c.notes.map((n) => html`<li data-testid="note-row" data-author=${n.author}>
            <span class="small muted">${formatUtc(n.at)} by <${Mono} value=${n.author} /></span><div data-testid="note-text">${n.text}</div>
            ${(n.attachments || []).map((a) => html`<div><button class="secondary small" data-testid="note-attachment" data-sha256=${a.sha256}
              onClick=${async () => download(a.name, await api.blob(`attachments/${a.sha256}`), 'application/octet-stream')}>${a.name}</button>
              <span class="small muted">${a.bytes} bytes, sha256 <code>${shortHash(a.sha256)}</code></span></div>`)}
            <div class="small muted">sha256 <code>${shortHash(n.hash)}</code> (on chain)</div></li>`)}</ul>`
          : html`<p class="muted">No notes on this flag.</p>`}
      </section>
      <section class="panel span-2" data-testid="case-transfer"><h2>Transfer</h2><${Transfer} tx=${c.tx} flag=${f} /></section>
      <section class="panel span-2" data-testid="case-trace"><h2>Gate trace</h2><${Trace} trace=${c.trace} /></section>
      <section class="panel" data-testid="case-travel-rule"><h2>Travel Rule payload</h2>
        ${p ? html`<${Kv} rows=${[
          ['tier', p.tier, 'travel-rule-tier'],
          ['originator ref', html`<code class="hash">${p.originator_ref}</code>`, 'travel-rule-originator-ref'],
          ['beneficiary ref', html`<code class="hash">${p.beneficiary_ref}</code>`, 'travel-rule-beneficiary-ref'],
          ['originator VASP', p.originator_vasp || html`<span class="muted">none</span>`],
          ['beneficiary VASP', p.beneficiary_vasp || html`<span class="muted">none</span>`],
          p.tx_hash ? ['anchored for', html`<code class="hash">${p.tx_hash}</code>`] : null,
        ]} />` : html`<p class="muted">No payload anchored for this transaction.</p>`}
      </section>
      <section class="panel" data-testid="case-identity"><h2>Subject's identity</h2>
        ${id_ ? html`<${Kv} rows=${[
          ['level', html`<code data-testid="identity-level">${id_.level}</code>`],
          ['VASP', id_.vasp_identifier || html`<span class="muted">none</span>`],
          ['IVMS101 ref', html`<code class="hash">${id_.ivms101_off_chain_ref || ''}</code>`],
          id_.enrolled_at ? ['enrolled', formatUtc(id_.enrolled_at)] : null,
          id_.last_level_change ? ['last level change', formatUtc(id_.last_level_change)] : null,
        ]} />` : html`<p class="muted">No identity record.</p>`}
      </section>
      <section class="panel" data-testid="case-timeline"><h2>Audit history of the subject</h2><${Timeline} entries=${c.subject_audit} subject=${f.subject} /></section>
      <section class="panel" data-testid="case-earlier-flags"><h2>Other flags of the subject</h2>
        ${(c.earlier_flags || []).length ? html`<div class="table-wrap"><table>
          <thead><tr><th>#</th><th>status</th><th>decorator</th><th class="num">amount</th><th>raised</th><th></th></tr></thead>
          <tbody>${c.earlier_flags.map((e) => html`<tr data-testid="earlier-flag-row" data-flag-id=${e.flag_id}>
            <td>${e.flag_id}</td><td><${StatusBadge} status=${e.status} /></td><td>${e.decorator}</td><td class="num">${formatCoin(e.amount)}</td>
            <td>${formatUtc(e.created_at)}</td><td><button class="secondary" data-testid="open-earlier-flag" onClick=${() => onOpen(e.flag_id)}>Open</button></td></tr>`)}</tbody>
        </table></div>` : html`<p class="muted">None.</p>`}
      </section>
    </div>
  </div>`;
}

// ---- charts -------------------------------------------------------------------------------------

const PALETTE = ['#0b5cab', '#e07a1f', '#1b7a3d', '#a4161a', '#6a4c93', '#2a9d8f', '#b08900', '#5d6678', '#d1495b', '#00798c'];

// A Chart.js chart on a canvas, rebuilt when `config` changes.
function ChartBox({ testid, config, height = 280 }) {
  const ref = useRef(null);
  // A layout effect runs in the same commit as the canvas, before the page paints: the parent's
  // data-ready="true" is never seen with a canvas that has no chart yet (a plain effect waits
  // for the next animation frame, which a busy machine delays).
  useLayoutEffect(() => {
    if (!ref.current || !window.Chart) return;
    const chart = new window.Chart(ref.current, config);
    return () => chart.destroy();
  }, [config]);
  if (!window.Chart) return html`<p class="msg msg-error">The charting library did not load.</p>`;
  return html`<div class="chart-box" style=${`height:${height}px`}><canvas data-testid=${testid} ref=${ref} role="img" aria-label=${testid}></canvas></div>`;
}

const baseOptions = (extra = {}) => ({
  responsive: true, maintainAspectRatio: false, animation: false,
  plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
  ...extra,
});

const dayKey = (t) => new Date(t).toISOString().slice(0, 10);
const hourKey = (t) => new Date(t).toISOString().slice(0, 13) + 'h';
function buckets(startMs, endMs, stepMs, keyFn) {
  const out = [];
  for (let t = Math.floor(startMs / stepMs) * stepMs; t < endMs; t += stepMs) out.push(keyFn(t));
  return out;
}
const median = (xs) => { if (!xs.length) return null; const s = xs.slice().sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

// The largest number of a subject's transfers inside any window of `windowSecs` (and the count in
// the window ending now), per subject.
function velocityPeaks(transfers, windowSecs) {
  const by = new Map();
  for (const e of transfers) {
    if (!by.has(e.subject)) by.set(e.subject, []);
    by.get(e.subject).push(ms(e.block_time));
  }
  const w = windowSecs * 1000, now = Date.now();
  return [...by.entries()].map(([subject, ts]) => {
    ts.sort((a, b) => a - b);
    let peak = 0, i = 0, peakAt = null;
    for (let j = 0; j < ts.length; j++) {
      while (ts[j] - ts[i] >= w) i++;
      if (j - i + 1 > peak) { peak = j - i + 1; peakAt = ts[j]; }
    }
    return { subject, peak, peakAt, current: ts.filter((t) => now - t < w).length };
  }).sort((a, b) => b.peak - a.peak || b.current - a.current);
}

function Dashboards() {
  const [days, setDays] = useState('7');
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);

  async function load() {
    setLoading(true);
    const end = Date.now(), start = end - Number(days) * 86400e3;
    const from = new Date(start).toISOString(), to = new Date(end + 60e3).toISOString();
    try {
      const [flags, audit, report, params] = await Promise.all([
        api.get('flags', {}), api.get('audit_log', { from, to }), api.get('report', { period_start: from, period_end: to }), api.get('params'),
      ]);
      setData({ start, end, flags: flags.flags || [], entries: audit.entries || [], report: report.sections || [], rules: (params.params && params.params.rules) || {} });
      setError(null);
    } catch (e) {
      setError(errorMsg(e, 'The dashboards could not be read'));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => { load(); }, [days]);

  const view = useMemo(() => {
    if (!data) return null;
    const { start, end, flags, entries, rules } = data;
    const inRange = flags.filter((f) => ms(f.created_at) >= start);
    // 1. flags per day, by decorator and status
    const dayLabels = buckets(start, end + 1, 86400e3, dayKey);
    const combos = [...new Set(inRange.map((f) => `${f.decorator} · ${statusShort(f.status)}`))].sort();
    const flagsPerDay = {
      type: 'bar',
      data: { labels: dayLabels, datasets: combos.map((k, i) => ({ label: k, backgroundColor: PALETTE[i % PALETTE.length],
        data: dayLabels.map((d) => inRange.filter((f) => dayKey(f.created_at) === d && `${f.decorator} · ${statusShort(f.status)}` === k).length) })) },
      options: baseOptions({ scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'flags' } } } }),
    };
    // 2. time to resolution (to the decision; for escalated flags, to the escalation)
    const moved = inRange.filter((f) => f.status !== 'FLAG_STATUS_EMITTED' && f.updated_at);
    const hours = (f) => (ms(f.updated_at) - ms(f.created_at)) / 3600e3;
    const bins = [[0, 1, '< 1 h'], [1, 4, '1–4 h'], [4, 12, '4–12 h'], [12, 24, '12–24 h'], [24, 72, '1–3 d'], [72, Infinity, '> 3 d']];
    const groups = [['FLAG_STATUS_RESOLVED_APPROVED', 'approved'], ['FLAG_STATUS_RESOLVED_BLOCKED', 'blocked'], ['FLAG_STATUS_PENDING_OFFICER', 'escalated (to escalation)']];
    const resolution = {
      type: 'bar',
      data: { labels: bins.map((b) => b[2]), datasets: groups.map(([s, label], i) => ({ label, backgroundColor: [PALETTE[2], PALETTE[3], PALETTE[4]][i],
        data: bins.map(([lo, hi]) => moved.filter((f) => f.status === s && hours(f) >= lo && hours(f) < hi).length) })) },
      options: baseOptions({ scales: { x: { stacked: true, title: { display: true, text: 'time from flag to decision' } }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } }),
    };
    const resolvedHours = moved.filter((f) => f.status.startsWith('FLAG_STATUS_RESOLVED')).map(hours);
    // 3. stablecoin volume and count per hour
    const transfers = entries.filter((e) => e.tx_type === 'transfer' && e.amount && String(e.amount.denom).startsWith('hkd.'));
    const hourLabels = buckets(start, end + 1, 3600e3, hourKey);
    const idx = new Map(hourLabels.map((h, i) => [h, i]));
    const vol = hourLabels.map(() => 0), cnt = hourLabels.map(() => 0);
    let totalCents = 0n;
    for (const e of transfers) {
      const i = idx.get(hourKey(e.block_time));
      if (i === undefined) continue;
      vol[i] += Number(e.amount.amount) / 100;
      cnt[i] += 1;
      totalCents += BigInt(e.amount.amount);
    }
    const volume = {
      type: 'bar',
      data: { labels: hourLabels, datasets: [
        { type: 'bar', label: 'volume (HKD)', data: vol, backgroundColor: PALETTE[0], yAxisID: 'y' },
        { type: 'line', label: 'transfers', data: cnt, borderColor: PALETTE[1], backgroundColor: PALETTE[1], pointRadius: 0, borderWidth: 1.5, yAxisID: 'y1' },
      ] },
      options: baseOptions({ scales: { x: { ticks: { maxTicksLimit: 12, autoSkip: true } },
        y: { beginAtZero: true, position: 'left', title: { display: true, text: 'HKD' } },
        y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, ticks: { precision: 0 }, title: { display: true, text: 'transfers' } } } }),
    };
    // 4. subjects nearest the velocity limit
    const limit = Number(rules.velocity_tx_limit || 10), windowSecs = Number(rules.velocity_window_seconds || 60);
    const peaks = velocityPeaks(transfers, windowSecs).slice(0, 10);
    const velocity = {
      type: 'bar',
      data: { labels: peaks.map((p) => shortAddr(p.subject)), datasets: [
        { label: `most transfers in any ${windowSecs} s window`, data: peaks.map((p) => p.peak), backgroundColor: peaks.map((p) => (p.peak >= limit ? PALETTE[3] : p.peak >= limit * 0.7 ? PALETTE[1] : PALETTE[0])) },
        { label: 'in the window ending now', data: peaks.map((p) => p.current), backgroundColor: PALETTE[7] },
      ] },
      options: baseOptions({ indexAxis: 'y', scales: { x: { beginAtZero: true, suggestedMax: limit, ticks: { precision: 0 }, title: { display: true, text: `transfers (limit ${limit} per ${windowSecs} s)` } } } }),
    };
    // 5. sanctions and rule changes (and enforcement) on the same hourly axis as the transfers
    const evTypes = [['sanctions_update', 'sanctions update'], ['sanctions', 'sanctions hit'], ['rule_update', 'rule update'],
      ['blacklist', 'blacklist'], ['freeze', 'freeze'], ['pause', 'pause'], ['level_change', 'level change']];
    const events = entries.filter((e) => evTypes.some(([t]) => t === e.tx_type));
    const evSets = evTypes.map(([t, label], i) => {
      const d = hourLabels.map(() => 0);
      events.filter((e) => e.tx_type === t).forEach((e) => { const k = idx.get(hourKey(e.block_time)); if (k !== undefined) d[k] += 1; });
      return { type: 'bar', label, data: d, backgroundColor: PALETTE[(i + 3) % PALETTE.length], yAxisID: 'y1', barThickness: 6 };
    }).filter((s) => s.data.some((v) => v));
    const eventsChart = {
      type: 'bar',
      data: { labels: hourLabels, datasets: [
        { type: 'line', label: 'transfers per hour', data: cnt, borderColor: '#9aa3b2', backgroundColor: '#9aa3b2', pointRadius: 0, borderWidth: 1, yAxisID: 'y' },
        ...evSets,
      ] },
      options: baseOptions({ scales: { x: { stacked: true, ticks: { maxTicksLimit: 12, autoSkip: true } },
        y: { beginAtZero: true, position: 'left', ticks: { precision: 0 }, title: { display: true, text: 'transfers' } },
        y1: { stacked: true, beginAtZero: true, position: 'right', suggestedMax: 3, grid: { drawOnChartArea: false }, ticks: { precision: 0 }, title: { display: true, text: 'changes' } } } }),
    };
    const countBy = (s) => flags.filter((f) => f.status === s).length;
    const section = (n) => (data.report.find((s) => s.name === n) || { rows: [] }).rows.length;
    const tiles = [
      ['waiting for a reviewer', countBy('FLAG_STATUS_EMITTED'), 'tile-emitted'],
      ['waiting for an officer', countBy('FLAG_STATUS_PENDING_OFFICER'), 'tile-pending'],
      ['flags in period', inRange.length, 'tile-flags'],
      ['median time to decision', resolvedHours.length ? formatDuration(median(resolvedHours) * 3600) : '—', 'tile-median'],
      ['transfers in period', transfers.length, 'tile-transfers'],
      ['volume in period', formatHkd(totalCents.toString()), 'tile-volume'],
      ['report: open flags / closures', `${section('threshold_flags')} / ${section('review_closures')}`, 'tile-report'],
    ];
    return { flagsPerDay, resolution, volume, velocity, eventsChart, events, tiles, peaks, limit, windowSecs };
  }, [data]);

  return html`<section data-testid="dashboards" data-ready=${view && !loading ? 'true' : 'false'}>
    <div class="row" style="margin-bottom:.8rem">
      <label style="max-width:14rem">Period
        <select data-testid="dash-range" value=${days} onChange=${(e) => setDays(e.target.value)}>
          <option value="1">last 24 hours</option><option value="7">last 7 days</option><option value="30">last 30 days</option>
        </select></label>
      <div class="actions"><button class="secondary" data-testid="dash-refresh" onClick=${load} disabled=${loading}>${loading ? 'Loading…' : 'Refresh'}</button></div>
      <p class="hint" style="flex:2 1 20rem">Drawn in this page from the chain's own queries (flags, audit log, report, params) as they answer now. Times in UTC.</p>
    </div>
    <${Message} testid="dash-error" msg=${error} />
    ${view ? html`
      <div class="tiles" data-testid="dash-tiles">${view.tiles.map(([k, v, id]) => html`<div class="tile"><div class="v" data-testid=${id}>${v}</div><div class="k">${k}</div></div>`)}</div>
      <div class="grid">
        <section class="panel"><h2>Flags per day, by decorator and status</h2><${ChartBox} testid="chart-flags-per-day" config=${view.flagsPerDay} /></section>
        <section class="panel"><h2>Time to resolution</h2><${ChartBox} testid="chart-resolution-time" config=${view.resolution} /></section>
        <section class="panel span-2"><h2>Stablecoin volume and transfers per hour</h2><${ChartBox} testid="chart-volume-hourly" config=${view.volume} /></section>
        <section class="panel"><h2>Subjects nearest the velocity limit</h2>
          ${view.peaks.length ? html`<${ChartBox} testid="chart-velocity" config=${view.velocity} />` : html`<p class="muted">No stablecoin transfers in the period.</p>`}
          <p class="hint">Limit ${view.limit} transfers per ${view.windowSecs} s (the chain's params); red reached it, orange at 70 % or more.</p></section>
        <section class="panel"><h2>Sanctions, rule changes and enforcement, against transfers</h2><${ChartBox} testid="chart-events" config=${view.eventsChart} />
          <ul class="small" data-testid="dash-events">${view.events.slice(-12).reverse().map((e) => html`<li>${formatUtc(e.block_time)} <strong>${e.tx_type}</strong> <${Mono} value=${e.subject} />
            ${Object.entries(e.metadata || {}).slice(0, 3).map(([k, v]) => html` <span class="muted">${k}=${v}</span>`)}</li>`)}</ul>
          ${view.events.length ? null : html`<p class="muted small">No sanctions, rule or enforcement changes in the period.</p>`}</section>
      </div>` : loading ? html`<div class="msg msg-pending"><span class="spinner"></span> Loading…</div>` : null}
  </section>`;
}

// ---- audit log explorer -------------------------------------------------------------------------

const AUDIT_COLUMNS = ['sequence', 'block_height', 'block_time', 'tx_type', 'subject', 'counterparty', 'amount', 'denom', 'amount_display', 'tx_hash', 'metadata'];
const auditCsvRow = (e) => ({
  sequence: e.sequence, block_height: e.block_height, block_time: e.block_time, tx_type: e.tx_type, subject: e.subject, counterparty: e.counterparty,
  amount: e.amount ? e.amount.amount : '', denom: e.amount ? e.amount.denom : '', amount_display: e.amount ? formatCoin(e.amount) : '', tx_hash: e.tx_hash,
  metadata: Object.entries(e.metadata || {}).map(([k, v]) => `${k}=${v}`).join(';'),
});
const stamp = () => new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const MAX_ROWS = 2000;

function AuditExplorer() {
  const [f, setF] = useState({ subject: '', tx_type: '', tx_hash: '', from: '', to: '' });
  const [entries, setEntries] = useState(null);
  const [shownFilter, setShownFilter] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);
  const [rep, setRep] = useState({ start: utcToLocalInput(Date.now() - 30 * 86400e3), end: utcToLocalInput(Date.now() + 60e3) });
  const [report, setReport] = useState(null);
  const [repError, setRepError] = useState(null);
  const [repLoading, setRepLoading] = useState(false);

  async function search(e) {
    if (e) e.preventDefault();
    setLoading(true);
    const q = { subject: f.subject.trim(), tx_type: f.tx_type.trim(), tx_hash: f.tx_hash.trim(), from: localInputToUtc(f.from), to: localInputToUtc(f.to) };
    try {
      const r = await api.get('audit_log', q);
      setEntries((r.entries || []).slice().sort((a, b) => Number(a.sequence) - Number(b.sequence)));
      setShownFilter(q);
      setError(null);
    } catch (err) {
      setError(errorMsg(err, 'The audit log could not be read'));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => { search(); }, []);

  async function runReport(e) {
    if (e) e.preventDefault();
    setRepLoading(true);
    try {
      const r = await api.get('report', { period_start: localInputToUtc(rep.start), period_end: localInputToUtc(rep.end) });
      setReport({ sections: r.sections || [], start: localInputToUtc(rep.start), end: localInputToUtc(rep.end) });
      setRepError(null);
    } catch (err) {
      setRepError(errorMsg(err, 'The report could not be read'));
    } finally {
      setRepLoading(false);
    }
  }

  function exportAudit() {
    download(`audit-log-${stamp()}.csv`, toCsv(AUDIT_COLUMNS, entries.map(auditCsvRow)));
  }
  // The node's export of the From/To range (every other row as its digest, the committed head
  // and count with their proofs, the header): an auditor checks it with `lantaud audit verify`.
  async function exportVerifiable() {
    try {
      const x = await api.get('audit_export', { from: localInputToUtc(f.from), to: localInputToUtc(f.to) });
      download(`audit-export-${stamp()}.json`, JSON.stringify(x, null, 2), 'application/json');
      setError(null);
    } catch (err) {
      setError(errorMsg(err, 'The audit export could not be made'));
    }
  }
  function exportReport() {
    const cols = ['section', ...new Set(report.sections.flatMap((s) => s.rows.flatMap((r) => Object.keys(r.cells || {}))))];
    const rows = report.sections.flatMap((s) => s.rows.map((r) => ({ section: s.name, ...(r.cells || {}) })));
    download(`report-${report.start || 'start'}-${report.end || 'end'}.csv`.replace(/:/g, ''), toCsv(cols, rows));
  }

  const set = (k) => (e) => setF({ ...f, [k]: e.target.value });
  const shown = entries ? entries.slice(0, MAX_ROWS) : [];
  return html`<div class="grid">
    <section class="panel span-2" data-testid="audit">
      <h2>Audit log</h2>
      <form class="row" onSubmit=${search}>
        <label>Subject<input data-testid="audit-subject" value=${f.subject} onInput=${set('subject')} placeholder="lantau1…" spellcheck="false" /></label>
        <label>tx_type (exact)<input data-testid="audit-tx-type" list="tx-types" value=${f.tx_type} onInput=${set('tx_type')} placeholder="any" />
          <datalist id="tx-types">${KNOWN_TX_TYPES.map((t) => html`<option value=${t} />`)}</datalist></label>
        <label>tx hash<input data-testid="audit-tx-hash" value=${f.tx_hash} onInput=${set('tx_hash')} placeholder="any case" spellcheck="false" /></label>
        <label>From (UTC)<input type="datetime-local" data-testid="audit-from" value=${f.from} onInput=${set('from')} /></label>
        <label>To (UTC, exclusive)<input type="datetime-local" data-testid="audit-to" value=${f.to} onInput=${set('to')} /></label>
        <div class="actions">
          <button type="submit" data-testid="audit-search" disabled=${loading}>${loading ? 'Searching…' : 'Search'}</button>
          <button type="button" class="secondary" data-testid="audit-export-csv" disabled=${!entries || !entries.length} onClick=${exportAudit}>Export CSV</button>
          <button type="button" class="secondary" data-testid="audit-export-verifiable" title="The rows of the From/To range with the hash chain and the proofs against the chain: check it offline with lantaud audit verify" onClick=${exportVerifiable}>Export for auditors (verifiable)</button>
        </div>
      </form>
      <${Message} testid="audit-error" msg=${error} />
      <p class="small muted" style="margin:.6rem 0"><span data-testid="audit-count" data-count=${entries ? entries.length : ''}>${entries ? entries.length : '…'}</span> entries
        ${shownFilter ? ` for ${Object.entries(shownFilter).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`).join(', ') || 'no filter'}` : ''}
        ${entries && entries.length > MAX_ROWS ? ` — the table shows the first ${MAX_ROWS}; the CSV holds all ${entries.length}` : ''}</p>
      <div class="table-wrap" style="max-height:60vh">
        <table class="cards">
          <thead><tr><th>#</th><th>time (UTC)</th><th>height</th><th>tx_type</th><th>subject</th><th>counterparty</th><th class="num">amount</th><th>tx</th><th>metadata</th></tr></thead>
          <tbody>${shown.map((e) => html`<tr data-testid="audit-row" data-sequence=${e.sequence} data-tx-type=${e.tx_type} data-tx-hash=${e.tx_hash}>
            <td data-label="#">${e.sequence}</td><td data-label="time (UTC)">${formatUtc(e.block_time)}</td><td data-label="height">${e.block_height}</td><td data-label="tx_type"><code>${e.tx_type}</code></td>
            <td data-label="subject"><${Mono} value=${e.subject} /></td><td data-label="counterparty"><${Mono} value=${e.counterparty} /></td><td data-label="amount" class="num">${formatCoin(e.amount)}</td>
            <td data-label="tx"><${Mono} value=${e.tx_hash} short=${shortHash} /></td>
            <td data-label="metadata" class="wrap small">${Object.entries(e.metadata || {}).map(([k, v]) => html`<span style="margin-right:.5rem">${k}=<code title=${v}>${v.length > 24 ? shortHash(v) : v}</code></span>`)}</td></tr>`)}</tbody>
        </table>
        ${entries && !entries.length ? html`<div class="empty">No entries match.</div>` : null}
      </div>
    </section>
    <section class="panel span-2" data-testid="report">
      <h2>Report for a period</h2>
      <form class="row" onSubmit=${runReport}>
        <label>Period start (UTC)<input type="datetime-local" data-testid="report-start" value=${rep.start} onInput=${(e) => setRep({ ...rep, start: e.target.value })} /></label>
        <label>Period end (UTC)<input type="datetime-local" data-testid="report-end" value=${rep.end} onInput=${(e) => setRep({ ...rep, end: e.target.value })} /></label>
        <div class="actions">
          <button type="submit" data-testid="report-run" disabled=${repLoading}>${repLoading ? 'Running…' : 'Run report'}</button>
          <button type="button" class="secondary" data-testid="report-export-csv" disabled=${!report} onClick=${exportReport}>Export CSV</button>
        </div>
      </form>
      <${Message} testid="report-error" msg=${repError} />
      ${report ? report.sections.map((s) => {
        const cols = [...new Set(s.rows.flatMap((r) => Object.keys(r.cells || {})))];
        return html`<div data-testid="report-section" data-name=${s.name} data-rows=${s.rows.length}>
          <h3>${s.name} <span class="muted small">(${s.rows.length} rows)</span></h3>
          ${s.rows.length ? html`<div class="table-wrap"><table><thead><tr>${cols.map((c) => html`<th>${c}</th>`)}</tr></thead>
            <tbody>${s.rows.map((r) => html`<tr>${cols.map((c) => html`<td>${c === 'subject' || c === 'counterparty' ? html`<${Mono} value=${r.cells[c]} />` : c === 'tx_hash' ? html`<${Mono} value=${r.cells[c]} short=${shortHash} />` : r.cells[c]}</td>`)}</tr>`)}</tbody></table></div>`
          : html`<p class="muted small">${s.name === 'par_value_daily' ? 'Always empty: circulation and reserve figures come from the reserve module.' : 'No rows.'}</p>`}
        </div>`;
      }) : null}
    </section>
  </div>`;
}

// ---- group proposals -------------------------------------------------------------------------

const optionShort = (o) => String(o || '').replace('VOTE_OPTION_', '');

function Proposals({ onCount }) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(false);
  const [pending, setPending] = useState(null); // { id, option }
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);

  async function load() {
    setLoading(true);
    try {
      const d = await api.get('proposals');
      setData(d);
      setError(null);
      onCount(d.groups.reduce((n, g) => n + g.proposals.filter((p) => !p.my_vote).length, 0));
    } catch (e) {
      setError(errorMsg(e, 'Could not load the proposals'));
    } finally {
      setLoading(false);
    }
  }
  useEffect(() => { load(); }, []);

  async function cast() {
    const { id, option } = pending;
    setPending(null);
    setBusy(true);
    setResult({ kind: 'pending', text: `Signing and broadcasting your ${optionShort(option)} on proposal #${id}; waiting until it is in a block…` });
    try {
      const r = await api.post(`proposals/${encodeURIComponent(id)}/vote`, { option });
      setResult({ kind: 'ok', text: `Done: your ${optionShort(option)} on proposal #${id} is on chain (it runs the proposal if it was the approval that reached the threshold).`,
        attrs: { 'data-tx-hash': r.tx_hash } });
    } catch (e) {
      setResult(errorMsg(e, 'The vote was refused'));
    } finally {
      setBusy(false);
      load();
    }
  }

  const groups = data ? data.groups : [];
  return html`<section class="panel" data-testid="proposals" data-loading=${loading ? 'true' : 'false'}>
    <h2>Group proposals <button class="secondary small" data-testid="proposals-refresh" onClick=${load} disabled=${loading}>Refresh</button></h2>
    <p class="muted small">Proposals of the groups this key is a member of, still open. A proposal runs when the approvals reach the group's threshold; the approval that reaches it runs it.</p>
    <${Message} testid="proposals-error" msg=${error} />
    <${Message} testid="proposal-result" msg=${result} />
    ${data && !groups.length ? html`<p class="muted">This key is a member of no group.</p>` : null}
    ${groups.map((g) => html`<div class="panel" data-testid="group-panel" data-group=${g.group.address} data-threshold=${g.group.threshold}>
      <h3>Group <${Mono} value=${g.group.address} /> — ${g.group.threshold} of ${g.group.total_weight}${g.group.metadata ? html` · ${g.group.metadata}` : null}</h3>
      ${g.proposals.length ? null : html`<p class="muted">No open proposal.</p>`}
      ${g.proposals.map((p) => html`<div class="proposal" data-testid="proposal-row" data-proposal-id=${p.id} data-status=${p.status} data-my-vote=${p.my_vote || ''}>
        <div><strong>#${p.id}</strong> proposed by <${Mono} value=${p.proposer} /> · expires ${formatUtc(p.expires_at)} · <span class="badge">${String(p.status).replace('PROPOSAL_STATUS_', '')}</span></div>
        <div data-testid="proposal-tally" data-yes=${p.yes_weight} data-threshold=${g.group.threshold}>Approvals ${p.yes_weight} of ${g.group.threshold} needed; rejections ${p.no_weight}; abstentions ${p.abstain_weight}.
          ${p.my_vote ? html` You voted <strong>${optionShort(p.my_vote)}</strong>.` : html` You have not voted.`}</div>
        ${p.messages.map((m) => html`<pre class="small" data-testid="proposal-message">${JSON.stringify(m, null, 2)}</pre>`)}
        <div class="actions">
          <button data-testid="proposal-approve" disabled=${busy || !!p.my_vote} onClick=${() => setPending({ id: p.id, option: 'YES' })}>Approve</button>
          <button class="danger" data-testid="proposal-reject" disabled=${busy || !!p.my_vote} onClick=${() => setPending({ id: p.id, option: 'NO' })}>Reject</button>
          <button class="secondary" data-testid="proposal-abstain" disabled=${busy || !!p.my_vote} onClick=${() => setPending({ id: p.id, option: 'ABSTAIN' })}>Abstain</button>
        </div>
      </div>`)}
    </div>`)}
    ${pending ? html`<div class="dialog-backdrop" data-testid="proposal-confirm-dialog">
      <div class="dialog" role="dialog" aria-modal="true" aria-labelledby="vote-title">
        <h2 id="vote-title">${optionShort(pending.option)} on proposal #${pending.id}?</h2>
        <p>The console signs a group vote with this key and broadcasts it. A vote cannot be changed.</p>
        <div class="actions">
          <button data-testid="proposal-confirm" onClick=${cast}>Sign and send</button>
          <button class="secondary" data-testid="proposal-cancel" onClick=${() => setPending(null)}>Cancel</button>
        </div>
      </div></div>` : null}
  </section>`;
}

// ---- the page -----------------------------------------------------------------------------------

// Sign-In with Ethereum: the wallet's address, the desk's challenge, personal_sign, a session.
function SignIn({ why, onSignedIn }) {
  const [msg, setMsg] = useState(why ? { kind: 'info', text: why } : null);
  const [busy, setBusy] = useState(false);
  async function signIn() {
    setBusy(true);
    setMsg({ kind: 'pending', text: 'Asking your wallet…' });
    try {
      const [address] = await walletRequest('eth_requestAccounts');
      const ch = await fetchJson('/api/signin/challenge', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ address }) });
      setMsg({ kind: 'pending', text: 'Sign the message in your wallet: it proves the address and sends no transaction.' });
      const signature = await walletRequest('personal_sign', [utf8ToHex(ch.message), address]);
      const s = await fetchJson('/api/signin', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message: ch.message, signature }) });
      sessionStorage.setItem(TOKEN_KEY, s.token);
      api.token = s.token;
      onSignedIn();
    } catch (e) {
      setMsg(errorMsg(e, 'Sign-in failed'));
    } finally {
      setBusy(false);
    }
  }
  return html`<main><div class="panel" data-testid="signin">
    <h1>Lantau compliance desk</h1>
    <p>Sign in with the wallet that holds your key: the desk shows what your role on chain allows (reviewer, officer, group member) and signs your actions with the key it holds for you.</p>
    ${window.ethereum ? null : html`<p class="muted">No wallet in this browser: install MetaMask (or another EIP-1193 wallet), or open the address <code>lantaud console --key</code> printed.</p>`}
    <div class="actions"><button data-testid="signin-wallet" disabled=${busy || !window.ethereum} onClick=${signIn}>Sign in with your wallet</button></div>
    <${Message} testid="signin-error" msg=${msg} />
  </div></main>`;
}

function App() {
  const [session, setSession] = useState(null);
  const [sessionError, setSessionError] = useState(null);
  const [signIn, setSignIn] = useState(api.token ? null : { why: null });
  const [tab, setTab] = useState('worklist');
  const [caseId, setCaseId] = useState(null);
  const [filters, setFilters] = useState(null);
  const [awaiting, setAwaiting] = useState(0);
  const [epoch, setEpoch] = useState(0);

  api.onSessionEnd = (e) => {
    sessionStorage.removeItem(TOKEN_KEY);
    api.token = null;
    setSession(null);
    setSignIn({ why: e.code === 'session_expired' ? 'Your session has expired: sign in again.' : 'Sign in to go on.' });
  };

  useEffect(() => {
    if (!api.token) return;
    api.get('session').then((s) => {
      api.csrf = s.csrf_token;
      setSession(s);
      setSignIn(null);
      setFilters({ status: s.role === 'officer' ? 'FLAG_STATUS_PENDING_OFFICER' : 'FLAG_STATUS_EMITTED', vasp: '', from: '', to: '' });
      // The proposals awaiting this person's vote, counted on the tab from the start.
      api.get('proposals').then((d) => setAwaiting(d.groups.reduce((n, g) => n + g.proposals.filter((p) => !p.my_vote).length, 0)), () => {});
    }, (e) => { if (e.status !== 401) setSessionError(errorMsg(e, 'The console did not answer')); });
  }, [epoch]);

  async function signOut() {
    try { await api.post('signout', {}); } catch { /* the session may be gone already */ }
    api.onSessionEnd({ code: 'signed_out' });
  }

  const open = (id) => { setCaseId(String(id)); setTab('case'); window.scrollTo(0, 0); };

  if (signIn) return html`<${SignIn} why=${signIn.why} onSignedIn=${() => setEpoch((n) => n + 1)} />`;
  if (sessionError) return html`<main><div class="panel"><h1>Lantau compliance desk</h1><${Message} testid="session-error" msg=${sessionError} /></div></main>`;
  if (!session) return html`<main><p>Loading the session…</p></main>`;

  const tabs = [['worklist', 'Worklist'], ['case', caseId ? `Case #${caseId}` : 'Case'], ['proposals', awaiting ? `Proposals (${awaiting})` : 'Proposals'],
    ['dashboards', 'Dashboards'], ['audit', 'Audit log']];
  return html`<div data-testid="console-app" data-ready="true" data-role=${session.role || ''}>
    <header class="topbar">
      <h1>Lantau compliance desk</h1>
      <div class="who">
        <span class=${`badge badge-role`} data-testid="session-role" data-value=${session.role || ''}>${session.role || ((session.groups || []).length ? 'group member' : 'no role')}</span>
        <span>key <code data-testid="session-key-name">${session.key_name || '—'}</code>${session.label ? html` <span data-testid="session-label">(${session.label})</span>` : null}</span>
        ${session.can_act ? null : html`<span class="badge" data-testid="session-read-only">read only</span>`}
        <span><code class="hash" data-testid="session-address" data-value=${session.address} title=${session.address}>${session.address}</code></span>
        <span>chain <code data-testid="session-chain">${session.chain_id}</code></span>
        ${session.expires_at ? html`<span class="small muted" data-testid="session-expires" data-value=${session.expires_at}>until ${formatUtc(session.expires_at)}</span>` : null}
        <button class="secondary small" data-testid="signout" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main>
      <nav class="tabs" role="tablist">${tabs.map(([id, label]) => html`<button role="tab" data-testid=${`tab-${id}`} aria-selected=${tab === id ? 'true' : 'false'}
        disabled=${id === 'case' && !caseId} onClick=${() => setTab(id)}>${label}</button>`)}</nav>
      ${tab === 'worklist' ? html`<${Worklist} session=${session} filters=${filters} setFilters=${setFilters} onOpen=${open} />` : null}
      ${tab === 'case' && caseId ? html`<${CaseView} session=${session} id=${caseId} onOpen=${open} />` : null}
      ${tab === 'proposals' ? html`<${Proposals} onCount=${setAwaiting} />` : null}
      ${tab === 'dashboards' ? html`<${Dashboards} />` : null}
      ${tab === 'audit' ? html`<${AuditExplorer} />` : null}
    </main>
  </div>`;
}

mount(App);
