// A stock Hardhat 2 project pointed at a Lantau dev chain. The only departure from a fresh
// `npx hardhat init` is the compiler: this machine reaches no compiler download site, so the
// solc-js of the npm `solc` package compiles (the version below is that package's).
const { subtask } = require("hardhat/config");
const { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } = require("hardhat/builtin-tasks/task-names");
require("@nomicfoundation/hardhat-toolbox");

const solc = require("solc/package.json");

subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args, _hre, runSuper) => {
  if (args.solcVersion !== solc.version) {
    return runSuper();
  }
  return {
    compilerPath: require.resolve("solc/soljson.js"),
    isSolcJs: true,
    version: args.solcVersion,
    longVersion: require("solc").version(),
  };
});

// Build output outside the work tree when the caller says where (the tests do).
const out = process.env.LANTAU_HARDHAT_OUT;

/** @type import('hardhat/config').HardhatUserConfig */
module.exports = {
  solidity: solc.version,
  defaultNetwork: "lantau",
  networks: {
    // The dev chain of `bash scripts/dev.sh` (or the URL a test starts); its funded accounts
    // come from the dev mnemonic, as Hardhat's own network's do.
    lantau: {
      url: process.env.LANTAU_ETH_URL || "http://127.0.0.1:8545",
      accounts: { mnemonic: "test test test test test test test test test test test junk", count: 12 },
    },
  },
  paths: out ? { artifacts: `${out}/artifacts`, cache: `${out}/cache` } : {},
  mocha: { timeout: 120000 },
};
