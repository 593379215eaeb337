//! The portal's OpenAPI 3.1 document (`GET /openapi.json`): the bodies of `docs/web-api.md`.

use serde_json::{json, Value};

fn error_response(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn ok(description: &str, schema: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn body(schema: &str) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}})
}

fn address_param() -> Value {
    json!({"name": "address", "in": "path", "required": true, "description": "bech32 lantau1… or 0x hex", "schema": {"type": "string"}})
}

/// The document.
pub(crate) fn document() -> Value {
    let faucet = |summary: &str, extra: Value| {
        let mut responses = json!({
            "200": ok("Sent and included", "FaucetAnswer"),
            "400": error_response("invalid_address or malformed_body"),
            "422": error_response("tx_refused: the chain refused the faucet's transaction (tx_code, codespace, raw_log)"),
            "429": {"description": "rate_limited: Retry-After header and retry_after_secs", "headers": {"Retry-After": {"schema": {"type": "integer"}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
            "502": error_response("node_unavailable"),
        });
        if let (Some(r), Some(e)) = (responses.as_object_mut(), extra.as_object()) {
            r.extend(e.clone());
        }
        json!({"post": {"summary": summary, "requestBody": body("AddressBody"), "responses": responses}})
    };
    let admin = json!([{"bearer": []}]);
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Lantau onboarding portal", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Test networks only. Faucets and identity applications; see docs/portal.md and docs/web-api.md."},
        "paths": {
            "/api/config": {"get": {"summary": "Chain, wallet and faucet settings for the page", "responses": {"200": ok("The settings", "Config")}}},
            "/api/account/{address}": {"get": {"summary": "Balances, identity and application of an address", "parameters": [address_param()],
                "responses": {"200": ok("The account", "Account"), "400": error_response("invalid_address")}}},
            "/faucet/native": faucet("Native coin for gas, to any address", json!({})),
            "/faucet/hkd": faucet("Stablecoin, to an address with an identity record", json!({"403": error_response("no_identity")})),
            "/kyc/challenge": {"post": {"summary": "A Sign-In with Ethereum (EIP-4361) challenge for an address", "requestBody": body("AddressBody"),
                "responses": {"200": ok("The challenge", "Challenge"), "400": error_response("invalid_address or malformed_body")}}},
            "/kyc/apply": {"post": {"summary": "An identity application, proven by the challenge signed with personal_sign (EIP-191)", "requestBody": body("ApplyBody"),
                "responses": {
                    "201": ok("Recorded (enrolled already when the portal auto-approves)", "ApplicationAnswer"),
                    "400": error_response("malformed_body or invalid_request (a field, or a message that is not the challenge)"),
                    "401": error_response("bad_signature"),
                    "404": error_response("not_found: no challenge with this nonce"),
                    "409": error_response("challenge_used or already_applied"),
                    "410": error_response("challenge_expired"),
                    "502": error_response("node_unavailable")}}},
            "/kyc/applications/{address}": {"get": {"summary": "The address's latest application (no personal data)", "parameters": [address_param()],
                "responses": {"200": ok("The application", "ApplicationAnswer"), "404": error_response("not_found")}}},
            "/api/transfer/prepare": {"post": {"summary": "The transaction a wallet sends for an HKD transfer (transferWithTravelRule on the token precompile)", "requestBody": body("PrepareBody"),
                "responses": {"200": ok("What to hand eth_sendTransaction", "Prepared"), "400": error_response("invalid_address or invalid_request")}}},
            "/admin/applications": {"get": {"summary": "Applications, with personal data (operator)", "security": admin,
                "parameters": [{"name": "status", "in": "query", "schema": {"type": "string", "enum": ["pending", "enrolled", "rejected", "failed"]}}],
                "responses": {"200": {"description": "The applications"}, "401": error_response("unauthorized")}}},
            "/admin/applications/{id}/approve": {"post": {"summary": "Enrol a pending (or failed) application (operator)", "security": admin,
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": ok("The application after the enrolment", "ApplicationAnswer"), "401": error_response("unauthorized"), "404": error_response("not_found"), "409": error_response("already_decided")}}},
            "/admin/applications/{id}/reject": {"post": {"summary": "Reject a pending application (operator)", "security": admin,
                "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["reason"], "properties": {"reason": {"type": "string"}}}}}},
                "responses": {"200": ok("The application", "ApplicationAnswer"), "401": error_response("unauthorized"), "404": error_response("not_found"), "409": error_response("already_decided")}}},
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "The operator token printed when the portal starts"}},
            "schemas": {
                "Error": {"type": "object", "required": ["code", "message"], "properties": {
                    "code": {"type": "string"}, "message": {"type": "string"}, "retry_after_secs": {"type": "integer"},
                    "tx_hash": {"type": "string"}, "tx_code": {"type": "integer"}, "codespace": {"type": "string"}, "raw_log": {"type": "string"}}},
                "AddressBody": {"type": "object", "required": ["address"], "properties": {"address": {"type": "string", "examples": ["lantau1…", "0x…"]}}},
                "FaucetAnswer": {"type": "object", "properties": {"tx_hash": {"type": "string"}, "height": {"type": "string"}, "address": {"type": "string"},
                    "hex_address": {"type": "string"}, "denom": {"type": "string"}, "amount": {"type": "string"}, "balance": {"type": "string"}}},
                "Challenge": {"type": "object", "properties": {"nonce": {"type": "string"}, "message": {"type": "string", "description": "EIP-4361 text, to sign unchanged"},
                    "issued_at": {"type": "string", "format": "date-time"}, "expires_at": {"type": "string", "format": "date-time"}}},
                "ApplyBody": {"type": "object", "required": ["message", "signature", "person"], "properties": {
                    "message": {"type": "string"}, "signature": {"type": "string", "description": "0x + 65 bytes r‖s‖v (personal_sign)"},
                    "person": {"type": "object", "required": ["given_name", "family_name", "date_of_birth", "country_of_residence", "national_identifier"], "properties": {
                        "given_name": {"type": "string"}, "family_name": {"type": "string"}, "date_of_birth": {"type": "string", "format": "date"},
                        "country_of_residence": {"type": "string", "description": "ISO 3166-1 alpha-2"}, "national_identifier": {"type": "string"},
                        "national_identifier_type": {"type": "string", "description": "IVMS101 code (IDCD, CCPT, DRLC, TXID, SOCS, ARNU, MISC) or NATIONAL_IDENTITY_NUMBER, PASSPORT_NUMBER…"}}}}},
                "Application": {"type": "object", "properties": {"id": {"type": "string"}, "address": {"type": "string"}, "hex_address": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "enrolled", "rejected", "failed"]}, "level": {"type": "string"},
                    "ivms101_off_chain_ref": {"type": "string"}, "tx_hash": {"type": ["string", "null"]}, "created_at": {"type": "string"},
                    "decided_at": {"type": ["string", "null"]}, "reason": {"type": ["string", "null"]}}},
                "ApplicationAnswer": {"type": "object", "properties": {"application": {"$ref": "#/components/schemas/Application"}}},
                "Account": {"type": "object", "properties": {"address": {"type": "string"}, "hex_address": {"type": "string"}, "native_balance": {"type": "string"},
                    "hkd_balance": {"type": "string"}, "identity": {"type": ["object", "null"]}, "application": {"oneOf": [{"$ref": "#/components/schemas/Application"}, {"type": "null"}]}}},
                "Config": {"type": "object"},
                "PrepareBody": {"type": "object", "required": ["from", "to", "amount"], "properties": {"from": {"type": "string"}, "to": {"type": "string"}, "amount": {"type": "string", "description": "base units (cents)"}}},
                "Prepared": {"type": "object", "properties": {"to": {"type": "string"}, "data": {"type": "string"}, "gas": {"type": "string"}, "payload": {"type": "object"}}},
            }
        }
    })
}
