//! The audit log's one error: an entry the writer refuses (codespace `compliance`, code 5).

use lantau_module_api::TxError;

/// An entry the writer refuses: `compliance` code 5, "invalid audit entry" (the code it has
/// always had, from the module whose log it is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidAuditEntry(pub String);

impl std::fmt::Display for InvalidAuditEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid audit entry: {}", self.0)
    }
}

impl std::error::Error for InvalidAuditEntry {}

impl lantau_module_api::ErrorCode for InvalidAuditEntry {
    fn codespace(&self) -> &'static str {
        "compliance"
    }
    fn code(&self) -> u32 {
        5
    }
}

pub(crate) fn invalid(m: String) -> TxError {
    TxError::from_code(&InvalidAuditEntry(m))
}
