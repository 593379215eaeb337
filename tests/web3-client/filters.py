"""web3.py against a running Lantau node over HTTP: a contract event filter
(create_filter: eth_newFilter and eth_getFilterChanges), a block filter and a pending
transaction filter, each delivering what happened once.

Started by crates/node/tests/it/evm_client.rs, which passes ETH_URL, ALICE_KEY (0x hex),
BOB, TOKEN (addresses), PAYLOAD_ALICE_BOB (0x hex protobuf Travel Rule payload). Prints one
JSON line; exits non-zero on the first failed check.
"""

import json
import os
import time

from eth_account import Account
from web3 import Web3

ABI = [
    {
        "type": "function",
        "name": "transferWithTravelRule",
        "stateMutability": "nonpayable",
        "inputs": [
            {"name": "to", "type": "address"},
            {"name": "amount", "type": "uint256"},
            {"name": "payload", "type": "bytes"},
        ],
        "outputs": [{"name": "", "type": "bool"}],
    },
    {
        "type": "event",
        "name": "Transfer",
        "anonymous": False,
        "inputs": [
            {"name": "from", "type": "address", "indexed": True},
            {"name": "to", "type": "address", "indexed": True},
            {"name": "value", "type": "uint256", "indexed": False},
        ],
    },
]

w3 = Web3(Web3.HTTPProvider(os.environ["ETH_URL"]))
assert w3.eth.chain_id == 852
alice = Account.from_key(os.environ["ALICE_KEY"])
bob = Web3.to_checksum_address(os.environ["BOB"])
token = w3.eth.contract(address=Web3.to_checksum_address(os.environ["TOKEN"]), abi=ABI)
payload = bytes.fromhex(os.environ["PAYLOAD_ALICE_BOB"][2:])

start = w3.eth.block_number
transfers = token.events.Transfer.create_filter(from_block="latest")
blocks = w3.eth.filter("latest")
pending = w3.eth.filter("pending")

sent = []
for amount in (11, 12):
    tx = token.functions.transferWithTravelRule(bob, amount, payload).build_transaction(
        {
            "from": alice.address,
            "nonce": w3.eth.get_transaction_count(alice.address),
            "gas": 500_000,
            "maxFeePerGas": 2_000_000_000,
            "maxPriorityFeePerGas": 1_000_000_000,
            "chainId": 852,
        }
    )
    h = w3.eth.send_raw_transaction(alice.sign_transaction(tx).raw_transaction)
    assert w3.eth.wait_for_transaction_receipt(h, timeout=30, poll_latency=0.1)["status"] == 1
    sent.append(h)

# The pending filter saw both submissions, once.
hashes = pending.get_new_entries()
assert [bytes(h) for h in hashes] == [bytes(h) for h in sent], (hashes, sent)
assert pending.get_new_entries() == []

# The event filter: both transfers, once each, decoded.
entries = []
for _ in range(100):
    entries += transfers.get_new_entries()
    if len(entries) >= 2:
        break
    time.sleep(0.1)
entries += transfers.get_new_entries()
assert [e["args"]["value"] for e in entries] == [11, 12], entries
assert [bytes(e["transactionHash"]) for e in entries] == [bytes(h) for h in sent]
assert transfers.get_new_entries() == []
# get_all_entries: a filter's whole range (eth_getFilterLogs), here from the block after start.
since = token.events.Transfer.create_filter(from_block=start + 1)
assert [e["args"]["value"] for e in since.get_all_entries()] == [11, 12]

# The block filter: every block since it was made (blocks keep coming meanwhile), once, in
# order, with no gap.
end = w3.eth.block_number
got = blocks.get_new_entries()
numbers = [w3.eth.get_block(h)["number"] for h in got]
assert numbers and numbers[0] > start, (start, numbers)
assert numbers == list(range(numbers[0], numbers[0] + len(numbers))), (start, numbers)
assert numbers[-1] >= end and len(numbers) >= 2, (end, numbers)

assert w3.eth.uninstall_filter(transfers.filter_id) is True
assert w3.eth.uninstall_filter(transfers.filter_id) is False
print(json.dumps({"transfers": len(entries), "blocks": len(numbers)}))
