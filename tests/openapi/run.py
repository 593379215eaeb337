#!/usr/bin/env python3
"""The REST server's OpenAPI document, checked from outside against a running node.

Usage: run.py REST_URL [extra schemathesis run options...]

1. Fetches REST_URL/openapi.json and validates it against the OpenAPI specification
   (openapi-spec-validator; 3.0 or 3.1, as the document declares).
2. Runs schemathesis on that document against REST_URL, bounded (examples per operation,
   a per-request timeout, and a wall clock for the whole run), with the checks that say "no
   5xx, and every response as the document declares it": not_a_server_error,
   status_code_conformance, content_type_conformance, response_schema_conformance.

Exits non-zero on any failure; schemathesis prints each failure with a curl line that
reproduces it, and the seed of the run (LANTAU_OPENAPI_SEED=<seed> replays the same
generation). Run by crates/node/tests/it/openapi.rs with tests/openapi/.venv's python
(scripts/prereqs.sh installs tests/openapi/requirements.txt there).
"""

import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

# The whole run (fetch, validation, schemathesis), in seconds.
WALL_CLOCK_SECS = 240
# Test cases per API operation (each of the examples, fuzzing and stateful phases).
MAX_EXAMPLES = 20
# One request, in seconds.
REQUEST_TIMEOUT_SECS = 15
# Exactly the checks for "no 5xx, and no response other than the document declares":
# the status code, the Content-Type and the body (against the declared schema).
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
)
PHASES = ("examples", "coverage", "fuzzing", "stateful")


def fetch_document(url: str) -> dict:
    req = urllib.request.Request(url, headers={"accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            status, ctype, body = resp.status, resp.headers.get("content-type", ""), resp.read()
    except urllib.error.HTTPError as e:
        raise SystemExit(f"openapi: GET {url} answered {e.code}: {e.read()[:500]!r}") from None
    except (urllib.error.URLError, OSError) as e:
        raise SystemExit(f"openapi: GET {url} failed: {e}") from None
    if status != 200 or "json" not in ctype:
        raise SystemExit(f"openapi: GET {url} answered {status} ({ctype!r}), not 200 JSON: {body[:500]!r}")
    try:
        doc = json.loads(body)
    except ValueError as e:
        raise SystemExit(f"openapi: GET {url} is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise SystemExit(f"openapi: GET {url} is not a JSON object")
    return doc


def dangling_refs(doc: dict) -> dict:
    """The document's local references (`#/...`) that resolve to nothing: ref -> where used."""

    def resolves(ref: str) -> bool:
        node = doc
        for part in ref[1:].split("/")[1:]:
            part = urllib.parse.unquote(part).replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                return False
        return True

    found: dict = {}

    def walk(node, at: str) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#") and not resolves(ref):
                found.setdefault(ref, []).append(at or "(root)")
            for k, v in node.items():
                walk(v, f"{at}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{at}/{i}")

    walk(doc, "")
    return found


def validate_document(doc: dict, url: str) -> None:
    from openapi_spec_validator.shortcuts import get_validator_cls
    from openapi_spec_validator.validation.exceptions import ValidatorDetectError

    try:
        cls = get_validator_cls(doc)
    except ValidatorDetectError:
        raise SystemExit(f"openapi: {url} declares no known OpenAPI version (openapi: {doc.get('openapi')!r})") from None
    dangling = dangling_refs(doc)
    if dangling:
        print(f"openapi: {url}: {len(dangling)} local $ref(s) point at nothing in the document:", file=sys.stderr)
        for ref, at in sorted(dangling.items()):
            print(f"  {ref} (used {len(at)} times, first at {at[0]})", file=sys.stderr)
        raise SystemExit(1)
    try:
        errors = list(cls(doc, base_uri=url).iter_errors())
    except Exception as e:  # an unresolvable reference, say: not a list of errors
        raise SystemExit(f"openapi: {url}: the validator stopped: {type(e).__name__}: {str(e)[:1000]}") from None
    if errors:
        print(f"openapi: {url} is not a valid OpenAPI {doc.get('openapi')} document ({len(errors)} errors):", file=sys.stderr)
        for e in errors[:20]:
            where = " > ".join(str(p) for p in getattr(e, "absolute_path", ())) or "(root)"
            message = (str(getattr(e, "message", e)).strip().splitlines() or [""])[0]
            print(f"  at {where}: {message}", file=sys.stderr)
        if len(errors) > 20:
            print(f"  ... and {len(errors) - 20} more", file=sys.stderr)
        raise SystemExit(1)
    ops = sum(1 for item in doc.get("paths", {}).values() for m in item if m in ("get", "put", "post", "delete", "options", "head", "patch", "trace"))
    print(f"openapi: {url}: a valid OpenAPI {doc['openapi']} document, {len(doc.get('paths', {}))} paths, {ops} operations", flush=True)


def schemathesis_command(spec: Path, base: str, extra: list) -> list:
    # The virtualenv's entry point, beside this interpreter (schemathesis has no __main__).
    st = Path(sys.executable).parent / "schemathesis"
    cmd = [
        str(st), "--no-color", "run", str(spec),
        "--url", base,
        "--checks", ",".join(CHECKS),
        "--phases", ",".join(PHASES),
        "--max-examples", str(MAX_EXAMPLES),
        "--request-timeout", str(REQUEST_TIMEOUT_SECS),
        # Slow data generation on a loaded CI machine is not a finding.
        "--suppress-health-check", "too_slow",
        # Nothing kept between runs: each run is its own (the seed reproduces one).
        "--generation-database", "none",
    ]
    seed = os.environ.get("LANTAU_OPENAPI_SEED")
    if seed:
        cmd += ["--seed", seed]
    return cmd + extra


def main(argv: list) -> int:
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    deadline = time.monotonic() + WALL_CLOCK_SECS
    base = argv[1].rstrip("/")
    url = f"{base}/openapi.json"
    doc = fetch_document(url)
    validate_document(doc, url)

    # schemathesis writes its caches (.hypothesis, .schemathesis) into its working directory:
    # a temporary one, with the document exactly as validated.
    with tempfile.TemporaryDirectory(prefix="lantau-openapi-") as tmp:
        spec = Path(tmp) / "openapi.json"
        spec.write_text(json.dumps(doc))
        cmd = schemathesis_command(spec, base, argv[2:])
        print("openapi: + " + shlex.join(cmd), flush=True)
        child = subprocess.Popen(cmd, cwd=tmp)
        try:
            code = child.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # Interrupted, schemathesis still reports the failures found so far.
            print(f"openapi: FAILED: schemathesis still running at the {WALL_CLOCK_SECS} s bound: interrupting it", file=sys.stderr, flush=True)
            child.send_signal(signal.SIGINT)
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            return 1
    if code != 0:
        print(f"openapi: FAILED: schemathesis exited with {code} (the failures are above, each with a curl line that reproduces it)", file=sys.stderr)
        return 1
    print("openapi: passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
