// Compiles contracts.sol with solc-js and prints {Name: {abi, bytecode}} as JSON.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

const here = path.dirname(fileURLToPath(import.meta.url));
const input = {
  language: 'Solidity',
  sources: { 'contracts.sol': { content: fs.readFileSync(path.join(here, 'contracts.sol'), 'utf8') } },
  settings: { evmVersion: 'cancun', optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
};
const out = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (out.errors || []).filter((e) => e.severity === 'error');
if (errors.length) {
  console.error(errors.map((e) => e.formattedMessage).join('\n'));
  process.exit(1);
}
const result = {};
for (const [name, c] of Object.entries(out.contracts['contracts.sol'])) {
  result[name] = { abi: c.abi, bytecode: '0x' + c.evm.bytecode.object };
}
process.stdout.write(JSON.stringify(result));
