// The onboarding portal of a Lantau test network (docs/web-api.md, "Portal").
//
// A person connects an EIP-1193 wallet (MetaMask or any window.ethereum), adds the chain
// (EIP-3085 wallet_addEthereumChain, chain id 852), gets native coin for gas, applies for an
// identity by signing a Sign-In with Ethereum challenge (EIP-4361, personal_sign), gets HKD from
// the HKD faucet and sends HKD with transferWithTravelRule. Without a wallet, an address can be
// pasted for the native faucet (and the HKD faucet, for an address that already has an identity).
//
// Stable hooks for tests (data-testid, unless marked #id):
//   portal-app                    the page root; data-config-loaded="true" once /api/config answered
//   config-error                  shown when /api/config failed
//   chain-name, chain-id          the chain the portal serves
//   -- Connect wallet
//   connect-wallet                button: eth_requestAccounts
//   add-network                   button: wallet_addEthereumChain + wallet_switchEthereumChain
//   no-wallet                     shown when window.ethereum is absent
//   wallet-address                the connected 0x address (data-value)
//   wallet-chain                  the wallet's chain id; data-on-lantau="true|false"
//   connect-result                message box (data-state ok|error|pending|info, data-code)
//   -- Account (the connected address, or the one last used in a faucet form)
//   account-address               bech32 address (data-value)
//   account-hex                   0x address (data-value)
//   balance-native                native balance, LANTAU; data-raw = alantau
//   balance-hkd                   HKD balance; data-raw = cents
//   identity-status               "none" | "enrolled" | application status; data-status the same
//   identity-level                the identity's level when enrolled
//   refresh-account               button
//   account-result                message box for account lookups
//   -- Gas faucet
//   native-address                input (prefilled when connected)
//   native-faucet                 button
//   native-faucet-result          message box; on success data-tx-hash
//   -- Apply for an identity
//   kyc-given-name, kyc-family-name, kyc-dob (YYYY-MM-DD), kyc-country (ISO 3166 alpha-2),
//   kyc-id-number, kyc-id-type    form inputs
//   kyc-apply                     button: challenge → personal_sign → apply
//   kyc-result                    message box
//   application-status            the application's status (data-status pending|enrolled|rejected|failed)
//   -- HKD faucet
//   hkd-address                   input (prefilled when connected)
//   hkd-faucet                    button
//   hkd-faucet-result             message box
//   -- Send HKD
//   send-to, send-amount          inputs (amount in HKD, e.g. 1.00)
//   send-submit                   button: prepare → eth_sendTransaction → receipt
//   send-result                   message box: data-state pending|ok|error; data-receipt-status 0x1|0x0
//   send-tx-hash                  the transaction hash (data-value)
//   send-payload                  the Travel Rule payload that was sent

import {
  mount,
  html, useState, useEffect, useCallback, useRef,
  fetchJson, Message, errorMsg, walletRequest,
  formatHkd, formatNative, parseUnits, utf8ToHex, isHexAddress, isBech32Address,
} from '/assets/common/ui.js';

const eth = () => window.ethereum;

async function post(url, body) {
  return fetchJson(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}


const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function ConfigPanel({ config }) {
  return html`<div class="who">
    <span>chain <code data-testid="chain-name">${config.chain_name}</code></span>
    <span>EVM chain id <code data-testid="chain-id">${config.evm_chain_id} (${config.evm_chain_id_hex})</code></span>
    <span>Cosmos chain <code>${config.chain_id}</code></span>
  </div>`;
}

function App() {
  const [config, setConfig] = useState(null);
  const [configError, setConfigError] = useState(null);
  const [wallet, setWallet] = useState({ address: null, chainId: null });
  const [connectMsg, setConnectMsg] = useState(null);
  const [account, setAccount] = useState(null);
  const [accountFor, setAccountFor] = useState('');
  const [accountMsg, setAccountMsg] = useState(null);
  const [nativeAddr, setNativeAddr] = useState('');
  const [nativeMsg, setNativeMsg] = useState(null);
  const [hkdAddr, setHkdAddr] = useState('');
  const [hkdMsg, setHkdMsg] = useState(null);
  const [kyc, setKyc] = useState({ given_name: '', family_name: '', date_of_birth: '', country_of_residence: 'HK', national_identifier: '', national_identifier_type: 'NATIONAL_IDENTITY_NUMBER' });
  const [kycMsg, setKycMsg] = useState(null);
  const [sendTo, setSendTo] = useState('');
  const [sendAmount, setSendAmount] = useState('1.00');
  const [sendMsg, setSendMsg] = useState(null);
  const [busy, setBusy] = useState('');
  const chainHex = config ? config.evm_chain_id_hex : '0x354';
  const onLantau = wallet.chainId && chainHex && wallet.chainId.toLowerCase() === chainHex.toLowerCase();
  const hasWallet = !!eth();

  useEffect(() => {
    fetchJson('/api/config').then(setConfig, setConfigError);
  }, []);

  // The account panel follows one address: the wallet's, else the last one a form used.
  const loadAccount = useCallback(async (address) => {
    if (!address) return;
    setAccountFor(address);
    try {
      const a = await fetchJson(`/api/account/${encodeURIComponent(address)}`);
      setAccount(a);
      setAccountMsg(null);
      return a;
    } catch (e) {
      setAccount(null);
      setAccountMsg(errorMsg(e, 'Could not read the account'));
    }
  }, []);

  const onAccounts = useCallback((accounts) => {
    const a = accounts && accounts[0] ? accounts[0] : null;
    setWallet((w) => ({ ...w, address: a }));
    if (a) {
      setNativeAddr(a);
      setHkdAddr(a);
      loadAccount(a);
    }
  }, [loadAccount]);

  useEffect(() => {
    const p = eth();
    if (!p || !p.on) return;
    const onChain = (c) => setWallet((w) => ({ ...w, chainId: c }));
    p.on('accountsChanged', onAccounts);
    p.on('chainChanged', onChain);
    // A wallet that already authorised this site answers eth_accounts without a prompt.
    p.request({ method: 'eth_accounts' }).then((a) => { if (a && a.length) onAccounts(a); }, () => {});
    p.request({ method: 'eth_chainId' }).then(onChain, () => {});
    return () => {
      if (p.removeListener) {
        p.removeListener('accountsChanged', onAccounts);
        p.removeListener('chainChanged', onChain);
      }
    };
  }, [onAccounts]);

  async function readChain() {
    const c = await walletRequest('eth_chainId');
    setWallet((w) => ({ ...w, chainId: c }));
    return c;
  }

  async function connect() {
    setBusy('connect');
    setConnectMsg({ kind: 'pending', text: 'Waiting for the wallet…' });
    try {
      const accounts = await walletRequest('eth_requestAccounts');
      onAccounts(accounts);
      const c = await readChain();
      setConnectMsg({ kind: 'ok', text: `Connected ${accounts[0]}${c.toLowerCase() === chainHex.toLowerCase() ? ' on Lantau.' : ': now add the Lantau network.'}` });
    } catch (e) {
      setConnectMsg(errorMsg(e, 'Not connected'));
    } finally {
      setBusy('');
    }
  }

  // EIP-3085 then EIP-3326: add the chain (a wallet that knows it already accepts it again), switch.
  async function addNetwork() {
    if (!config) return;
    setBusy('network');
    setConnectMsg({ kind: 'pending', text: 'Adding the Lantau network in the wallet…' });
    try {
      await walletRequest('wallet_addEthereumChain', [{
        chainId: config.evm_chain_id_hex,
        chainName: config.chain_name,
        rpcUrls: [config.evm_rpc_url],
        nativeCurrency: { name: 'Lantau', symbol: config.native.symbol || 'LANTAU', decimals: config.native.decimals ?? 18 },
      }]);
      await walletRequest('wallet_switchEthereumChain', [{ chainId: config.evm_chain_id_hex }]);
      const c = await readChain();
      if (c.toLowerCase() !== config.evm_chain_id_hex.toLowerCase()) throw new Error(`The wallet is still on chain ${c}; switch to ${config.chain_name} (${config.evm_chain_id}) in the wallet.`);
      setConnectMsg({ kind: 'ok', text: `The wallet is on ${config.chain_name} (chain id ${config.evm_chain_id}).` });
    } catch (e) {
      setConnectMsg(errorMsg(e, 'The network was not added'));
    } finally {
      setBusy('');
    }
  }

  async function ensureLantau() {
    const c = await readChain();
    if (c.toLowerCase() === chainHex.toLowerCase()) return;
    try {
      await walletRequest('wallet_switchEthereumChain', [{ chainId: chainHex }]);
    } catch (e) {
      throw new Error(`The wallet is on chain ${c}, not Lantau (${chainHex}): use "Add network" first. ${e.message}`);
    }
    await readChain();
  }

  function checkAddress(a) {
    if (!a) throw Object.assign(new Error('Enter an address (lantau1… or 0x…) or connect a wallet.'), { code: 'invalid_address' });
    if (!isHexAddress(a) && !isBech32Address(a)) throw Object.assign(new Error(`"${a}" is not an address: use lantau1… or 0x followed by 40 hex digits.`), { code: 'invalid_address' });
  }

  async function faucet(kind) {
    const address = (kind === 'native' ? nativeAddr : hkdAddr).trim();
    const set = kind === 'native' ? setNativeMsg : setHkdMsg;
    setBusy(kind);
    set({ kind: 'pending', text: 'Sending… the portal waits until the transaction is in a block.' });
    try {
      checkAddress(address);
      const r = await post(`/faucet/${kind}`, { address });
      const amount = kind === 'native' ? formatNative(r.amount) : formatHkd(r.amount);
      const balance = kind === 'native' ? formatNative(r.balance) : formatHkd(r.balance);
      set({
        kind: 'ok', text: `Sent ${amount} to ${r.address} at height ${r.height}. Balance now ${balance}.`, attrs: { 'data-tx-hash': r.tx_hash },
        extra: html`<div class="small">tx <code class="hash" data-testid=${`${kind}-faucet-tx`} data-value=${r.tx_hash}>${r.tx_hash}</code></div>`,
      });
      await loadAccount(wallet.address && !isForeign(address) ? wallet.address : address);
    } catch (e) {
      set(errorMsg(e, kind === 'native' ? 'The gas faucet refused' : 'The HKD faucet refused'));
    } finally {
      setBusy('');
    }
  }

  // True when `a` is not the connected wallet's address (a pasted one).
  function isForeign(a) {
    if (!wallet.address) return true;
    if (isHexAddress(a)) return a.toLowerCase() !== wallet.address.toLowerCase();
    return !(account && account.address === a && account.hex_address && account.hex_address.toLowerCase() === wallet.address.toLowerCase());
  }

  async function apply(ev) {
    ev.preventDefault();
    setBusy('kyc');
    try {
      if (!wallet.address) throw Object.assign(new Error('Connect a wallet first: the application is proven by signing a challenge with the address.'), { code: 'no_wallet' });
      const p = kyc;
      const missing = ['given_name', 'family_name', 'date_of_birth', 'country_of_residence', 'national_identifier'].filter((k) => !String(p[k]).trim());
      if (missing.length) throw Object.assign(new Error(`Fill in: ${missing.join(', ').replace(/_/g, ' ')}.`), { code: 'invalid_request' });
      if (!/^\d{4}-\d{2}-\d{2}$/.test(p.date_of_birth)) throw Object.assign(new Error('Date of birth as YYYY-MM-DD.'), { code: 'invalid_request' });
      if (!/^[A-Za-z]{2}$/.test(p.country_of_residence)) throw Object.assign(new Error('Country of residence as an ISO 3166 two-letter code, e.g. HK.'), { code: 'invalid_request' });
      setKycMsg({ kind: 'pending', text: 'Asking the portal for a challenge…' });
      const ch = await post('/kyc/challenge', { address: wallet.address });
      setKycMsg({ kind: 'pending', text: 'Sign the challenge in your wallet (Sign-In with Ethereum; it costs nothing).' });
      const signature = await walletRequest('personal_sign', [utf8ToHex(ch.message), wallet.address]);
      setKycMsg({ kind: 'pending', text: 'Sending the application…' });
      const person = { ...p, country_of_residence: p.country_of_residence.toUpperCase(), given_name: p.given_name.trim(), family_name: p.family_name.trim(), national_identifier: p.national_identifier.trim() };
      const r = await post('/kyc/apply', { message: ch.message, signature, person });
      const a = r.application;
      const text = a.status === 'enrolled'
        ? `Enrolled at ${a.level}: the identity is on chain.`
        : a.status === 'pending' ? 'Application received: it waits for an operator to approve it.' : `Application ${a.status}${a.reason ? `: ${a.reason}` : ''}.`;
      setKycMsg({ kind: a.status === 'enrolled' || a.status === 'pending' ? 'ok' : 'error', text, error: { message: text, code: a.status } });
      await loadAccount(wallet.address);
    } catch (e) {
      setKycMsg(errorMsg(e, 'The application was not accepted'));
      if (wallet.address) loadAccount(wallet.address);
    } finally {
      setBusy('');
    }
  }

  async function send(ev) {
    ev.preventDefault();
    setBusy('send');
    try {
      if (!wallet.address) throw Object.assign(new Error('Connect a wallet first: the wallet signs the transfer.'), { code: 'no_wallet' });
      const to = sendTo.trim();
      checkAddress(to);
      const cents = parseUnits(sendAmount, 2);
      if (cents === null || cents === '0') throw Object.assign(new Error('Amount in HKD with at most 2 decimals, more than 0 (e.g. 1.00).'), { code: 'invalid_request' });
      setSendMsg({ kind: 'pending', text: 'Preparing the transfer (Travel Rule payload from the identity registry)…' });
      const prep = await post('/api/transfer/prepare', { from: wallet.address, to, amount: cents });
      await ensureLantau();
      setSendMsg({ kind: 'pending', text: 'Confirm the transaction in your wallet…' });
      const tx = { from: wallet.address, to: prep.to, data: prep.data, value: '0x0' };
      if (prep.gas) tx.gas = prep.gas;
      const hash = await walletRequest('eth_sendTransaction', [tx]);
      const hashBox = html`<div class="small">tx <code class="hash" data-testid="send-tx-hash" data-value=${hash}>${hash}</code></div>`;
      const payloadBox = prep.payload ? html`<details><summary class="small">Travel Rule payload sent</summary><pre data-testid="send-payload">${JSON.stringify(prep.payload, null, 2)}</pre></details>` : null;
      setSendMsg({ kind: 'pending', text: 'Submitted; waiting until it is mined…', extra: hashBox });
      let receipt = null;
      for (let i = 0; i < 90 && !receipt; i++) {
        receipt = await walletRequest('eth_getTransactionReceipt', [hash]);
        if (!receipt) await sleep(1000);
      }
      if (!receipt) {
        setSendMsg({ kind: 'error', error: { code: 'not_mined', message: 'No receipt after 90 s: the transfer may still be waiting or may have been dropped. Check the balance before sending again.' }, title: 'Not confirmed' });
        return;
      }
      if (receipt.status === '0x1') {
        setSendMsg({ kind: 'ok', text: `Sent ${formatHkd(cents)} to ${to}: mined in block ${parseInt(receipt.blockNumber, 16)}, status 0x1.`, extra: html`<div>${hashBox}${payloadBox}</div>`, attrs: { 'data-receipt-status': receipt.status } });
      } else {
        // The receipt carries no reason: replay the call (read-only, against the current state).
        let reason = '';
        try {
          await walletRequest('eth_call', [{ from: wallet.address, to: prep.to, data: prep.data }, 'latest']);
        } catch (e) {
          reason = e.message;
        }
        setSendMsg({
          kind: 'error', title: 'Reverted: the gates refused it', attrs: { 'data-receipt-status': receipt.status },
          error: { code: 'reverted', message: `Mined with status ${receipt.status}: reverted: the gates refused it.${reason ? ` Replaying it now says: ${reason}` : ''}` },
        });
      }
      await loadAccount(wallet.address);
    } catch (e) {
      setSendMsg(errorMsg(e, 'Not sent'));
    } finally {
      setBusy('');
    }
  }

  if (configError) {
    return html`<main><div class="panel"><${Message} testid="config-error" msg=${errorMsg(configError, 'The portal could not read its configuration')} /></div></main>`;
  }
  if (!config) return html`<main><p>Loading…</p></main>`;

  const app = account && account.application;
  const identityStatus = account ? (account.identity ? 'enrolled' : app ? app.status : 'none') : '';
  const field = (key, label, extra = {}) => html`<label>${label}
    <input data-testid=${`kyc-${extra.id}`} name=${key} value=${kyc[key]} required
      onInput=${(e) => setKyc({ ...kyc, [key]: e.target.value })} ...${extra.attrs || {}} /></label>`;

  return html`<div data-testid="portal-app" data-config-loaded="true">
    <header class="topbar">
      <h1>Lantau onboarding portal</h1>
      <${ConfigPanel} config=${config} />
    </header>
    <main>
      <p class="muted small">A test network's front door: gas for fees, an identity, HKD to try transfers with. Nothing here is real money.
        Personal data stays in the portal's own database; the chain records only a reference to it.</p>
      <div class="grid">
        <section class="panel" data-testid="section-connect" id="connect">
          <h2><span class="step">1</span> Connect wallet</h2>
          ${hasWallet ? html`<div class="actions">
              <button data-testid="connect-wallet" onClick=${connect} disabled=${busy === 'connect'}>${wallet.address ? 'Reconnect' : 'Connect wallet'}</button>
              <button class="secondary" data-testid="add-network" onClick=${addNetwork} disabled=${!wallet.address || busy === 'network'}>Add network</button>
            </div>`
          : html`<div class="msg msg-info" data-testid="no-wallet">No browser wallet found (MetaMask or another EIP-1193 wallet).
              You can still get gas: paste an address in the gas faucet.</div>`}
          <dl class="kv" style="margin-top:.7rem">
            <dt>address</dt><dd>${wallet.address ? html`<code class="hash" data-testid="wallet-address" data-value=${wallet.address}>${wallet.address}</code>` : html`<span class="muted" data-testid="wallet-address" data-value="">not connected</span>`}</dd>
            <dt>network</dt><dd><span data-testid="wallet-chain" data-value=${wallet.chainId || ''} data-on-lantau=${onLantau ? 'true' : 'false'}>
              ${wallet.chainId ? (onLantau ? html`<span class="badge badge-ok">${config.chain_name} (${wallet.chainId})</span>` : html`<span class="badge badge-err">chain ${wallet.chainId}: not Lantau</span>`) : '—'}</span></dd>
          </dl>
          <p class="hint">Add network uses RPC ${config.evm_rpc_url}, chain id ${config.evm_chain_id}, currency ${config.native.symbol} (${config.native.decimals} decimals).</p>
          <${Message} testid="connect-result" msg=${connectMsg} />
        </section>

        <section class="panel" data-testid="section-account">
          <h2>Account</h2>
          ${account ? html`<dl class="kv">
              <dt>address</dt><dd><code class="hash" data-testid="account-address" data-value=${account.address}>${account.address}</code></dd>
              <dt>hex</dt><dd><code class="hash" data-testid="account-hex" data-value=${account.hex_address}>${account.hex_address}</code></dd>
            </dl>
            <div class="balances" style="margin-top:.6rem">
              <div class="tile"><div class="k">gas (native)</div><div class="v" data-testid="balance-native" data-raw=${account.native_balance}>${formatNative(account.native_balance)}</div></div>
              <div class="tile"><div class="k">stablecoin</div><div class="v" data-testid="balance-hkd" data-raw=${account.hkd_balance}>${formatHkd(account.hkd_balance)}</div></div>
            </div>
            <dl class="kv" style="margin-top:.6rem">
              <dt>identity</dt><dd><span class=${`badge badge-${identityStatus === 'none' ? 'x' : identityStatus}`} data-testid="identity-status" data-status=${identityStatus}>${identityStatus}</span>
                ${account.identity ? html` <code data-testid="identity-level">${account.identity.level}</code>` : null}</dd>
              ${account.identity && account.identity.ivms101_off_chain_ref ? html`<dt>reference</dt><dd><code class="hash">${account.identity.ivms101_off_chain_ref}</code></dd>` : null}
            </dl>`
          : html`<p class="muted" data-testid="account-empty">Connect a wallet or use a faucet to see an address's balances.</p>`}
          <div class="actions" style="margin-top:.6rem">
            <button class="secondary" data-testid="refresh-account" disabled=${!accountFor} onClick=${() => loadAccount(accountFor)}>Refresh</button>
          </div>
          <${Message} testid="account-result" msg=${accountMsg} />
        </section>

        <section class="panel" data-testid="section-native-faucet">
          <h2><span class="step">2</span> Gas faucet</h2>
          <p class="hint">${formatNative(config.native.faucet_amount)} for transaction fees. No identity needed; works without a wallet.</p>
          <form onSubmit=${(e) => { e.preventDefault(); faucet('native'); }}>
            <label>Address (lantau1… or 0x…)
              <input data-testid="native-address" value=${nativeAddr} placeholder="0x… or lantau1…" autocomplete="off" spellcheck="false"
                onInput=${(e) => setNativeAddr(e.target.value)} /></label>
            <div class="actions"><button data-testid="native-faucet" type="submit" disabled=${busy === 'native'}>Get gas</button></div>
          </form>
          <${Message} testid="native-faucet-result" msg=${nativeMsg} />
        </section>

        <section class="panel" data-testid="section-kyc">
          <h2><span class="step">3</span> Apply for an identity</h2>
          <p class="hint">A natural person (IVMS101). You prove you control the address by signing a challenge in your wallet.
            ${config.auto_approve ? ' On this network applications are approved at once.' : ' An operator reviews each application.'}</p>
          <form onSubmit=${apply}>
            <div class="row">
              ${field('given_name', 'Given name', { id: 'given-name', attrs: { autocomplete: 'given-name' } })}
              ${field('family_name', 'Family name', { id: 'family-name', attrs: { autocomplete: 'family-name' } })}
            </div>
            <div class="row">
              ${field('date_of_birth', 'Date of birth', { id: 'dob', attrs: { type: 'date', max: new Date().toISOString().slice(0, 10) } })}
              ${field('country_of_residence', 'Country of residence (ISO 3166, 2 letters)', { id: 'country', attrs: { maxlength: 2, pattern: '[A-Za-z]{2}', autocomplete: 'country' } })}
            </div>
            <div class="row">
              ${field('national_identifier', 'National identifier', { id: 'id-number', attrs: { autocomplete: 'off' } })}
              <label>Identifier type
                <select data-testid="kyc-id-type" value=${kyc.national_identifier_type} onChange=${(e) => setKyc({ ...kyc, national_identifier_type: e.target.value })}>
                  <option value="NATIONAL_IDENTITY_NUMBER">National identity number</option>
                  <option value="PASSPORT_NUMBER">Passport number</option>
                  <option value="DRIVERS_LICENSE_NUMBER">Driver's licence number</option>
                  <option value="SOCIAL_SECURITY_NUMBER">Social security number</option>
                  <option value="TAX_IDENTIFICATION_NUMBER">Tax identification number</option>
                  <option value="ALIEN_REGISTRATION_NUMBER">Alien registration number</option>
                  <option value="MISCELLANEOUS">Other</option>
                </select></label>
            </div>
            <div class="actions">
              <button data-testid="kyc-apply" type="submit" disabled=${!wallet.address || busy === 'kyc'}>Sign and apply</button>
              ${!wallet.address ? html`<span class="hint">Connect a wallet first.</span>` : null}
            </div>
          </form>
          ${app ? html`<dl class="kv small" style="margin-top:.6rem">
              <dt>application</dt><dd><span class=${`badge badge-${app.status}`} data-testid="application-status" data-status=${app.status}>${app.status}</span> #${app.id}, ${app.level}</dd>
              <dt>filed</dt><dd>${app.created_at}${app.decided_at ? `, decided ${app.decided_at}` : ''}</dd>
              ${app.tx_hash ? html`<dt>tx</dt><dd><code class="hash">${app.tx_hash}</code></dd>` : null}
              ${app.reason ? html`<dt>reason</dt><dd>${app.reason}</dd>` : null}
            </dl>` : null}
          <${Message} testid="kyc-result" msg=${kycMsg} />
        </section>

        <section class="panel" data-testid="section-hkd-faucet">
          <h2><span class="step">4</span> HKD faucet</h2>
          <p class="hint">${formatHkd(config.hkd.faucet_amount)} of ${config.hkd.display} (${config.hkd.denom}). Only for an address with an identity.</p>
          <form onSubmit=${(e) => { e.preventDefault(); faucet('hkd'); }}>
            <label>Address
              <input data-testid="hkd-address" value=${hkdAddr} placeholder="0x… or lantau1…" autocomplete="off" spellcheck="false"
                onInput=${(e) => setHkdAddr(e.target.value)} /></label>
            <div class="actions"><button data-testid="hkd-faucet" type="submit" disabled=${busy === 'hkd'}>Get HKD</button></div>
          </form>
          <${Message} testid="hkd-faucet-result" msg=${hkdMsg} />
        </section>

        <section class="panel" data-testid="section-send">
          <h2><span class="step">5</span> Send HKD</h2>
          <p class="hint">Through the wallet: transferWithTravelRule on the HKD token${config.hkd.token_address ? html` <code class="hash">${config.hkd.token_address}</code>` : ''}. The compliance gates run inside the transaction; a refused transfer is mined and reverts (the gas is paid).</p>
          <form onSubmit=${send}>
            <label>To (lantau1… or 0x…)
              <input data-testid="send-to" value=${sendTo} placeholder="0x… or lantau1…" autocomplete="off" spellcheck="false" onInput=${(e) => setSendTo(e.target.value)} /></label>
            <label>Amount (HKD)
              <input data-testid="send-amount" value=${sendAmount} inputmode="decimal" placeholder="1.00" onInput=${(e) => setSendAmount(e.target.value)} /></label>
            <div class="actions"><button data-testid="send-submit" type="submit" disabled=${!wallet.address || busy === 'send'}>Send</button>
              ${!wallet.address ? html`<span class="hint">Connect a wallet first.</span>` : null}</div>
          </form>
          <${Message} testid="send-result" msg=${sendMsg} />
        </section>
      </div>
    </main>
  </div>`;
}

mount(App);
