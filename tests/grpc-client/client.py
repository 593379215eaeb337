"""Python grpcio against a Lantau node's gRPC server (:9090), with the Cosmos SDK's stubs from
cosmpy: bank and auth queries (also at a height, through the x-cosmos-block-height header),
the tx service (GetTx, GetTxsEvent, Simulate, BroadcastTx), the tendermint service, errors as
gRPC status codes, and server reflection. Prints one JSON line of what it saw.

Reflection must describe the Cosmos SDK services the node answers (the descriptors written in
proto-reflection/): for each, the file containing the service is fetched over reflection with
its imports, and every method's request and response messages are compared recursively
(fields' names, numbers, labels, types, message/enum type names, oneofs; enum values) with
cosmpy's compiled descriptors of the same full names, as is every other message and enum those
files declare. Differences are reported, not asserted: the Rust test asserts there are none.

Usage: client.py HOST:PORT ALICE_BECH32 CHAIN_ID TX_HASH SIGNED_TX_HEX
"""

import json
import sys

import grpc
from cosmpy.protos.cosmos.auth.v1beta1 import auth_pb2, query_pb2 as auth_q, query_pb2_grpc as auth_g
from cosmpy.protos.cosmos.bank.v1beta1 import query_pb2 as bank_q, query_pb2_grpc as bank_g
from cosmpy.protos.cosmos.base.tendermint.v1beta1 import query_pb2 as tm_q, query_pb2_grpc as tm_g
from cosmpy.protos.cosmos.tx.v1beta1 import service_pb2 as tx_s, service_pb2_grpc as tx_g
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

# The cosmos.* methods the node answers (crates/app/src/grpc.rs, the auth and bank modules'
# query.rs, crates/rpc/src/grpc.rs); reflection must describe exactly these.
SERVED = {
    "cosmos.auth.v1beta1.Query": ["Account", "AccountInfo", "Bech32Prefix", "Params"],
    "cosmos.bank.v1beta1.Query": [
        "Balance", "AllBalances", "SpendableBalances", "SpendableBalanceByDenom", "SupplyOf",
        "TotalSupply", "Params", "DenomsMetadata", "DenomMetadata",
    ],
    "cosmos.tx.v1beta1.Service": ["Simulate", "GetTx", "BroadcastTx", "GetTxsEvent"],
    "cosmos.base.tendermint.v1beta1.Service": ["GetNodeInfo", "GetSyncing", "GetLatestBlock", "GetBlockByHeight"],
}

FieldType = descriptor_pb2.FieldDescriptorProto.Type
FieldLabel = descriptor_pb2.FieldDescriptorProto.Label


def reflect_files(ask, symbol):
    """The file declaring `symbol` and, transitively, the files it imports, in an order a
    descriptor pool accepts (imports first)."""
    files, order = {}, []

    def add(resp, what):
        if resp.HasField("error_response"):
            raise AssertionError(f"reflection: {what}: {resp.error_response.error_message}")
        for raw in resp.file_descriptor_response.file_descriptor_proto:
            fd = descriptor_pb2.FileDescriptorProto.FromString(raw)
            if fd.name not in files:
                files[fd.name] = fd
                for dep in fd.dependency:
                    if dep not in files:
                        add(ask(reflection_pb2.ServerReflectionRequest(file_by_filename=dep)), dep)
                order.append(fd)

    add(ask(reflection_pb2.ServerReflectionRequest(file_containing_symbol=symbol)), symbol)
    return order


def field_shape(f):
    kind = f.message_type.full_name if f.message_type else f.enum_type.full_name if f.enum_type else ""
    oneof = f.containing_oneof.name if f.containing_oneof else ""
    return {
        "number": f.number,
        "label": FieldLabel.Name(f.label),
        "type": FieldType.Name(f.type),
        "type_name": kind,
        "oneof": oneof,
    }


def compare_enum(ours, theirs, diffs):
    a = {v.name: v.number for v in ours.values}
    b = {v.name: v.number for v in theirs.values}
    for name in sorted(b.keys() - a.keys()):
        diffs.append(f"{theirs.full_name}.{name}: upstream value {b[name]} not declared")
    for name in sorted(a.keys() - b.keys()):
        diffs.append(f"{ours.full_name}.{name}: value not upstream")
    for name in sorted(a.keys() & b.keys()):
        if a[name] != b[name]:
            diffs.append(f"{ours.full_name}.{name}: number {a[name]}, upstream {b[name]}")


def compare_message(ours, theirs, seen, diffs):
    """Compares two message descriptors and, recursively, the types their fields name."""
    if theirs.full_name in seen:
        return
    seen.add(theirs.full_name)
    if ours.full_name != theirs.full_name:
        diffs.append(f"{ours.full_name}: upstream is {theirs.full_name}")
        return
    a = {f.name: f for f in ours.fields}
    b = {f.name: f for f in theirs.fields}
    for name in sorted(b.keys() - a.keys()):
        diffs.append(f"{theirs.full_name}.{name}: upstream field {field_shape(b[name])} not declared")
    for name in sorted(a.keys() - b.keys()):
        diffs.append(f"{ours.full_name}.{name}: field not upstream")
    for name in sorted(a.keys() & b.keys()):
        fa, fb = field_shape(a[name]), field_shape(b[name])
        for k in fa:
            if fa[k] != fb[k]:
                diffs.append(f"{ours.full_name}.{name}: {k} {fa[k]!r}, upstream {fb[k]!r}")
        if a[name].message_type and b[name].message_type:
            compare_message(a[name].message_type, b[name].message_type, seen, diffs)
        if a[name].enum_type and b[name].enum_type and b[name].enum_type.full_name not in seen:
            seen.add(b[name].enum_type.full_name)
            compare_enum(a[name].enum_type, b[name].enum_type, diffs)


def declared_types(fd):
    """Full names of every message (nested too) and enum a file declares."""
    msgs, enums = [], []

    def walk(prefix, m):
        name = f"{prefix}.{m.name}"
        msgs.append(name)
        for e in m.enum_type:
            enums.append(f"{name}.{e.name}")
        for n in m.nested_type:
            walk(name, n)

    for m in fd.message_type:
        walk(fd.package, m)
    enums += [f"{fd.package}.{e.name}" for e in fd.enum_type]
    return msgs, enums


def compare_services(ask, upstream_pool):
    """Reflection's descriptors of the SERVED services against cosmpy's."""
    diffs, seen, declared = [], set(), 0
    for service, methods in SERVED.items():
        pool = descriptor_pool.DescriptorPool()
        files = reflect_files(ask, service)
        for fd in files:
            pool.Add(fd)
        ours = pool.FindServiceByName(service)
        theirs = upstream_pool.FindServiceByName(service)
        for m in ours.methods:
            if m.name not in methods:
                diffs.append(f"{service}/{m.name}: described but not served")
        for name in methods:
            a, b = ours.methods_by_name.get(name), theirs.methods_by_name[name]
            if a is None:
                diffs.append(f"{service}/{name}: served but not described")
                continue
            for io in ("input_type", "output_type"):
                ta, tb = getattr(a, io), getattr(b, io)
                if ta.full_name != tb.full_name:
                    diffs.append(f"{service}/{name}: {io} {ta.full_name}, upstream {tb.full_name}")
                compare_message(ta, tb, seen, diffs)
        # Whatever else the fetched files declare must be upstream's too.
        for fd in files:
            if fd.name.startswith("google/protobuf/"):
                continue
            msgs, enums = declared_types(fd)
            declared += len(msgs) + len(enums)
            for name in msgs:
                try:
                    theirs_m = upstream_pool.FindMessageTypeByName(name)
                except KeyError:
                    diffs.append(f"{name}: no such upstream message")
                    continue
                compare_message(pool.FindMessageTypeByName(name), theirs_m, seen, diffs)
            for name in enums:
                if name in seen:
                    continue
                seen.add(name)
                try:
                    theirs_e = upstream_pool.FindEnumTypeByName(name)
                except KeyError:
                    diffs.append(f"{name}: no such upstream enum")
                    continue
                compare_enum(pool.FindEnumTypeByName(name), theirs_e, diffs)
    return sorted(set(diffs)), len(seen)

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

# a query at a height: the header in, the height it answered at out. The node keeps its last
# 10 heights (a second of 100 ms blocks), so ask at the height the latest answer came from.
_, call = bank.Balance.with_call(bank_q.QueryBalanceRequest(address=alice, denom="alantau"), timeout=10)
latest = dict(call.initial_metadata()).get("x-cosmos-block-height")
assert latest and int(latest) > 1, latest
at = str(int(latest) - 1)
_, call = bank.Balance.with_call(bank_q.QueryBalanceRequest(address=alice, denom="alantau"), metadata=[("x-cosmos-block-height", at)], timeout=10)
md = dict(call.initial_metadata())
assert md.get("x-cosmos-block-height") == at, (at, md)
out["at_height"] = {"asked": at, "answered": md.get("x-cosmos-block-height")}

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
for s in SERVED:
    assert s in services, services
out["services"] = services


def ask(req):
    return next(iter(refl.ServerReflectionInfo(iter([req]), timeout=10)))


# cosmpy's modules imported above put every type these services reach in the default pool.
differences, compared = compare_services(ask, descriptor_pool.Default())
out["reflection"] = {"compared_types": compared, "differences": differences}

# Every method reflection describes is served (an empty request: refused, not UNIMPLEMENTED).
unserved = []
for service, methods in SERVED.items():
    for m in methods:
        try:
            ch.unary_unary(f"/{service}/{m}")(b"", timeout=10)
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.UNIMPLEMENTED:
                unserved.append(f"{service}/{m}")
out["reflection"]["unserved"] = unserved
print(json.dumps(out))
