"""Python grpcio against a Lantau node's gRPC server (:9090), with the Cosmos SDK's stubs from
cosmpy: bank and auth queries (also at a height, through the x-cosmos-block-height header),
the tx service (GetTx, GetTxsEvent, Simulate, BroadcastTx), the tendermint service, errors as
gRPC status codes, and server reflection. Prints one JSON line of what it saw.

Usage: client.py HOST:PORT ALICE_BECH32 CHAIN_ID TX_HASH SIGNED_TX_HEX
"""

import json
import sys

import grpc
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, query_pb2 as auth_q, query_pb2_grpc as auth_g
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_q, query_pb2_grpc as bank_g
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tm_q, query_pb2_grpc as tm_g
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_s, service_pb2_grpc as tx_g
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

target, alice, chain_id, tx_hash, signed_hex = sys.argv[1:6]
out = {}
ch = grpc.insecure_channel(target)
grpc.channel_ready_future(ch).result(timeout=30)

# bank
bank = bank_g.QueryStub(ch)
bal = bank.Balance(bank_q.QueryBalanceRequest(address=alice, denom="hkd.demo"), timeout=10)
assert bal.balance.denom == "hkd.demo" and int(bal.balance.amount) > 0, bal
out["hkd"] = bal.balance.amount
all_b = bank.AllBalances(bank_q.QueryAllBalancesRequest(address=alice), timeout=10)
assert {c.denom for c in all_b.balances} >= {"alantau", "hkd.demo"}, all_b
supply = bank.SupplyOf(bank_q.QuerySupplyOfRequest(denom="hkd.demo"), timeout=10)
assert int(supply.amount.amount) >= int(bal.balance.amount)
metas = bank.DenomsMetadata(bank_q.QueryDenomsMetadataRequest(), timeout=10)
assert any(m.base == "hkd.demo" for m in metas.metadatas), metas

# a query at a height: the header in, the height it answered at out
_, call = bank.Balance.with_call(bank_q.QueryBalanceRequest(address=alice, denom="alantau"), metadata=[("x-cosmos-block-height", "1")], timeout=10)
md = dict(call.initial_metadata())
assert md.get("x-cosmos-block-height") == "1", md
out["at_height"] = md.get("x-cosmos-block-height")

# auth
auth = auth_g.QueryStub(ch)
acct = auth.Account(auth_q.QueryAccountRequest(address=alice), timeout=10)
base = auth_pb2.BaseAccount()
assert acct.account.Unpack(base), acct.account.type_url
assert base.address == alice
out["account_number"] = base.account_number
try:
    auth.Account(auth_q.QueryAccountRequest(address="lantau1" + "q" * 38), timeout=10)
    raise AssertionError("an invalid address must fail")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    out["invalid_address"] = e.code().name

# tx service
tx = tx_g.ServiceStub(ch)
got = tx.GetTx(tx_s.GetTxRequest(hash=tx_hash), timeout=10)
assert got.tx_response.txhash == tx_hash.upper() and got.tx_response.code == 0, got.tx_response
assert len(got.tx.body.messages) == 1
found = tx.GetTxsEvent(tx_s.GetTxsEventRequest(query=f"message.sender='{alice}'", limit=10), timeout=10)
assert found.total >= 1 and any(r.txhash == tx_hash.upper() for r in found.tx_responses), found.total
try:
    tx.GetTx(tx_s.GetTxRequest(hash="00" * 32), timeout=10)
    raise AssertionError("an unknown hash must fail")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.NOT_FOUND, e
signed = bytes.fromhex(signed_hex)
sim = tx.Simulate(tx_s.SimulateRequest(tx_bytes=signed), timeout=10)
assert sim.gas_info.gas_used > 0
out["simulated_gas"] = sim.gas_info.gas_used
sent = tx.BroadcastTx(tx_s.BroadcastTxRequest(tx_bytes=signed, mode=tx_s.BROADCAST_MODE_SYNC), timeout=10)
assert sent.tx_response.code == 0, sent.tx_response
out["broadcast"] = sent.tx_response.txhash

# tendermint service
tm = tm_g.ServiceStub(ch)
latest = tm.GetLatestBlock(tm_q.GetLatestBlockRequest(), timeout=10)
assert latest.block.header.height >= 1 and latest.block.header.chain_id == chain_id
b1 = tm.GetBlockByHeight(tm_q.GetBlockByHeightRequest(height=1), timeout=10)
assert b1.block.header.height == 1 and len(b1.block_id.hash) == 32
info = tm.GetNodeInfo(tm_q.GetNodeInfoRequest(), timeout=10)
assert info.default_node_info.network == chain_id
out["latest_height"] = latest.block.header.height

# a method nobody serves
try:
    ch.unary_unary("/cosmos.staking.v1beta1.Query/Validators")(b"", timeout=10)
    raise AssertionError("an unknown method must fail")
except grpc.RpcError as e:
    assert e.code() == grpc.StatusCode.UNIMPLEMENTED, e
    out["unknown_method"] = e.code().name

# reflection
refl = reflection_pb2_grpc.ServerReflectionStub(ch)
resp = next(iter(refl.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)))
services = sorted(s.name for s in resp.list_services_response.service)
for s in ["chain.compliance.v1.Query", "chain.kyc.v1.Query", "chain.reserve.v1.Query", "chain.stablecoin.v1.Query", "cosmos.evm.erc20.v1.Query"]:
    assert s in services, services
out["services"] = services
print(json.dumps(out))
