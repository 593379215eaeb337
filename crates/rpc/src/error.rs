//! The error body of the REST surface: gRPC status rendered over HTTP as the gRPC gateway
//! does, `{code, message, details}`, with an explicit map from gRPC code to HTTP status.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// gRPC status codes used by the REST surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GrpcCode {
    /// 3: the request is malformed (undecodable bytes, unparseable address, missing hash).
    InvalidArgument = 3,
    /// 5: the thing asked for does not exist.
    NotFound = 5,
    /// 9: the node cannot serve this request in its current configuration.
    FailedPrecondition = 9,
    /// 12: the method is not implemented.
    Unimplemented = 12,
    /// 13: an internal failure.
    Internal = 13,
    /// 14: the node is not ready.
    Unavailable = 14,
}

impl GrpcCode {
    /// The HTTP status the gRPC gateway maps this code to.
    pub fn http_status(self) -> StatusCode {
        match self {
            GrpcCode::InvalidArgument => StatusCode::BAD_REQUEST,
            GrpcCode::NotFound => StatusCode::NOT_FOUND,
            GrpcCode::FailedPrecondition => StatusCode::BAD_REQUEST,
            GrpcCode::Unimplemented => StatusCode::NOT_IMPLEMENTED,
            GrpcCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            GrpcCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

/// A REST error: gRPC code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// gRPC code.
    pub code: GrpcCode,
    /// Message.
    pub message: String,
}

#[derive(Serialize)]
struct Body<'a> {
    code: i32,
    message: &'a str,
    details: [(); 0],
}

impl ApiError {
    /// InvalidArgument (HTTP 400).
    pub fn invalid(message: impl Into<String>) -> Self {
        Self { code: GrpcCode::InvalidArgument, message: message.into() }
    }
    /// NotFound (HTTP 404).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self { code: GrpcCode::NotFound, message: message.into() }
    }
    /// FailedPrecondition (HTTP 400).
    pub fn failed_precondition(message: impl Into<String>) -> Self {
        Self { code: GrpcCode::FailedPrecondition, message: message.into() }
    }
    /// Unavailable (HTTP 503): the node is busy; retry.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self { code: GrpcCode::Unavailable, message: message.into() }
    }
    /// Internal (HTTP 500).
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self { code: GrpcCode::Internal, message: message.to_string() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body { code: self.code as i32, message: &self.message, details: [] };
        (self.code.http_status(), axum::Json(body)).into_response()
    }
}

impl From<crate::api::NodeError> for ApiError {
    /// The one mapping from a node error: a query refused for its cost is the request's fault
    /// (InvalidArgument), anything else Internal.
    fn from(e: crate::api::NodeError) -> Self {
        use crate::api::NodeError as N;
        match e {
            N::OverBudget(m) => ApiError::invalid(m),
            N::Unavailable(m) | N::Internal(m) => ApiError::internal(m),
        }
    }
}

impl From<lantau_app::module_api::QueryError> for ApiError {
    /// The one mapping from a module query error to a gRPC status.
    fn from(e: lantau_app::module_api::QueryError) -> Self {
        use lantau_app::module_api::QueryError as Q;
        let code = match &e {
            Q::NotFound(_) => GrpcCode::NotFound,
            Q::InvalidArgument(_) => GrpcCode::InvalidArgument,
            Q::FailedPrecondition(_) => GrpcCode::FailedPrecondition,
            Q::Internal(_) => GrpcCode::Internal,
        };
        Self { code, message: e.to_string() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_maps_to_a_status() {
        for (c, s) in [
            (GrpcCode::InvalidArgument, 400),
            (GrpcCode::NotFound, 404),
            (GrpcCode::FailedPrecondition, 400),
            (GrpcCode::Unimplemented, 501),
            (GrpcCode::Internal, 500),
            (GrpcCode::Unavailable, 503),
        ] {
            assert_eq!(c.http_status().as_u16(), s);
        }
    }

    #[test]
    fn every_node_error_maps_to_a_status() {
        use crate::api::NodeError as N;
        for (e, code, status) in [
            (N::OverBudget("narrow it".into()), GrpcCode::InvalidArgument, 400),
            (N::Unavailable("no answer".into()), GrpcCode::Internal, 500),
            (N::Internal("corrupt".into()), GrpcCode::Internal, 500),
        ] {
            let message = e.to_string();
            let a = ApiError::from(e);
            assert_eq!((a.code, a.code.http_status().as_u16(), a.message), (code, status, message));
        }
    }
}
