// An injected EIP-1193 wallet for browser tests: `window.ethereum` in the page, the key in Node.
//
// The page's requests cross to Node through page.exposeFunction; a viem account signs there
// (personal_sign, EIP-1559 transactions) and read methods are forwarded to the node's Ethereum
// JSON-RPC. Like a fresh MetaMask it starts on chain 0x1 without the Lantau chain: the page must
// add it (wallet_addEthereumChain; only 0x354 is accepted) before switching to it.

import { privateKeyToAccount } from 'viem/accounts';
import { isHex } from 'viem';

const LANTAU = '0x354';

// Forwarded unchanged to the node.
const READ_METHODS = new Set([
  'eth_blockNumber', 'eth_call', 'eth_estimateGas', 'eth_gasPrice', 'eth_getBalance', 'eth_getBlockByNumber', 'eth_getBlockByHash',
  'eth_getCode', 'eth_getTransactionByHash', 'eth_getTransactionCount', 'eth_getTransactionReceipt', 'eth_maxPriorityFeePerGas',
  'eth_feeHistory', 'eth_getLogs', 'net_version', 'web3_clientVersion',
]);

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// JSON-RPC over HTTP to the node.
export async function rpc(url, method, params = []) {
  const resp = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  const body = await resp.json();
  if (body.error) throw new RpcError(body.error.code, body.error.message, body.error.data);
  return body.result;
}

// Installs the wallet into `page` (before any page script runs). Returns a handle whose `log`
// lists every request the page made ({method, params}) and `addedChains` the chains it added.
export async function installWallet(page, { privateKey, rpcUrl, onRequest } = {}) {
  const account = privateKeyToAccount(privateKey);
  const state = { chainId: '0x1', addedChains: [], authorised: false, log: [] };

  async function handle(method, params) {
    switch (method) {
      case 'eth_requestAccounts':
        state.authorised = true;
        return [account.address];
      case 'eth_accounts':
        return state.authorised ? [account.address] : [];
      case 'eth_chainId':
        return state.chainId;
      case 'net_version':
        return String(parseInt(state.chainId, 16));
      case 'wallet_addEthereumChain': {
        const c = params && params[0];
        if (!c || typeof c.chainId !== 'string') throw new RpcError(-32602, 'wallet_addEthereumChain needs {chainId, …}');
        if (c.chainId.toLowerCase() !== LANTAU) throw new RpcError(4001, `the test wallet adds only chain ${LANTAU}, not ${c.chainId}`);
        if (!Array.isArray(c.rpcUrls) || !c.rpcUrls.length) throw new RpcError(-32602, 'rpcUrls must list at least one URL');
        if (!c.nativeCurrency || c.nativeCurrency.decimals !== 18 || !c.nativeCurrency.symbol) throw new RpcError(-32602, 'nativeCurrency {name, symbol, decimals: 18} expected');
        state.addedChains.push(c);
        return null;
      }
      case 'wallet_switchEthereumChain': {
        const id = params && params[0] && String(params[0].chainId).toLowerCase();
        if (id === '0x1') { state.chainId = '0x1'; return null; }
        if (!state.addedChains.some((c) => c.chainId.toLowerCase() === id)) throw new RpcError(4902, `Unrecognized chain ID "${id}". Try adding the chain using wallet_addEthereumChain first.`);
        state.chainId = id;
        return null;
      }
      case 'personal_sign': {
        if (!state.authorised) throw new RpcError(4100, 'not authorised: call eth_requestAccounts first');
        const [message, address] = params || [];
        if (!address || address.toLowerCase() !== account.address.toLowerCase()) throw new RpcError(4100, `personal_sign: unknown address ${address} (params are [message, address])`);
        return account.signMessage({ message: isHex(message) ? { raw: message } : message });
      }
      case 'eth_sendTransaction': {
        if (!state.authorised) throw new RpcError(4100, 'not authorised: call eth_requestAccounts first');
        if (state.chainId !== LANTAU) throw new RpcError(4901, `the wallet is on chain ${state.chainId}, not Lantau`);
        const tx = (params && params[0]) || {};
        if (!tx.from || tx.from.toLowerCase() !== account.address.toLowerCase()) throw new RpcError(4100, `eth_sendTransaction from an unknown account ${tx.from}`);
        const nonce = await rpc(rpcUrl, 'eth_getTransactionCount', [account.address, 'pending']);
        const gasPrice = BigInt(await rpc(rpcUrl, 'eth_gasPrice'));
        let tip = 0n;
        try { tip = BigInt(await rpc(rpcUrl, 'eth_maxPriorityFeePerGas')); } catch { tip = 0n; }
        const call = { from: account.address, to: tx.to, data: tx.data || '0x', value: tx.value || '0x0' };
        const gas = tx.gas ? BigInt(tx.gas) : (BigInt(await rpc(rpcUrl, 'eth_estimateGas', [call])) * 13n) / 10n;
        const signed = await account.signTransaction({
          type: 'eip1559', chainId: parseInt(LANTAU, 16), nonce: Number(BigInt(nonce)), to: tx.to, data: tx.data || '0x',
          value: BigInt(tx.value || 0), gas, maxFeePerGas: gasPrice * 2n + tip, maxPriorityFeePerGas: tip,
        });
        return rpc(rpcUrl, 'eth_sendRawTransaction', [signed]);
      }
      default:
        if (READ_METHODS.has(method)) return rpc(rpcUrl, method, params || []);
        throw new RpcError(4200, `the test wallet does not support ${method}`);
    }
  }

  await page.exposeFunction('__lantauTestWallet', async (method, paramsJson) => {
    const params = paramsJson ? JSON.parse(paramsJson) : undefined;
    state.log.push({ method, params });
    if (onRequest) onRequest(method, params);
    try {
      return { result: (await handle(method, params)) ?? null };
    } catch (e) {
      return { error: { code: e.code ?? -32603, message: e.shortMessage || e.message, data: e.data } };
    }
  });

  await page.addInitScript(() => {
    const listeners = {};
    const emit = (event, value) => (listeners[event] || []).slice().forEach((fn) => { try { fn(value); } catch (e) { console.error(e); } });
    const provider = {
      isMetaMask: false,
      isLantauTestWallet: true,
      async request({ method, params } = {}) {
        if (typeof method !== 'string') throw Object.assign(new Error('request needs a method'), { code: -32600 });
        const answer = await window.__lantauTestWallet(method, params === undefined ? '' : JSON.stringify(params));
        if (answer.error) throw Object.assign(new Error(answer.error.message), answer.error);
        if (method === 'eth_requestAccounts') emit('accountsChanged', answer.result);
        if (method === 'wallet_switchEthereumChain') emit('chainChanged', params[0].chainId);
        return answer.result;
      },
      on(event, fn) { (listeners[event] = listeners[event] || []).push(fn); return provider; },
      removeListener(event, fn) { listeners[event] = (listeners[event] || []).filter((f) => f !== fn); return provider; },
    };
    Object.defineProperty(window, 'ethereum', { value: provider, configurable: false, writable: false });
  });

  return { address: account.address, state, get log() { return state.log; }, get addedChains() { return state.addedChains; } };
}

