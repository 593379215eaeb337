//! Compiles `proto/**/*.proto` with protox (no system protoc) into prost types, and generates
//! gRPC-gateway style JSON (snake_case names, defaults emitted) with pbjson.
//!
//! Also compiles `proto-reflection/**/*.proto` (include paths `proto-reflection` and `proto`)
//! into a second encoded `FileDescriptorSet`, `cosmos_descriptor.bin`, for server reflection
//! only: no Rust types are generated from it.

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            // A new file changes its directory's mtime, not the root's: watch every directory.
            println!("cargo:rerun-if-changed={}", p.display());
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "proto") {
            out.push(p);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Read at run time, not baked in with `env!`: worktrees sharing one CARGO_TARGET_DIR share
    // this build script's binary, and each must compile its own `proto/`.
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto");
    let mut files = Vec::new();
    collect(&root, &mut files);
    println!("cargo:rerun-if-changed={}", root.display());
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let fds = protox::compile(&files, [&root])?;
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let descriptor_path = out.join("descriptor.bin");
    std::fs::write(&descriptor_path, prost::Message::encode_to_vec(&fds))?;

    // The Cosmos SDK / CometBFT services' descriptors, for reflection. They import coin.proto
    // and pagination.proto from `proto/`, so those (and the well-known types) are in both
    // sets; tonic-reflection keeps the first registration of a file name and skips the
    // second, which is only harmless if the two are the same file: checked here.
    let reflection_root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR")?).join("../../proto-reflection");
    let mut reflection_files = Vec::new();
    collect(&reflection_root, &mut reflection_files);
    println!("cargo:rerun-if-changed={}", reflection_root.display());
    for f in &reflection_files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    let cosmos_fds = protox::compile(&reflection_files, [&reflection_root, &root])?;
    for theirs in &cosmos_fds.file {
        if let Some(ours) = fds.file.iter().find(|f| f.name == theirs.name) {
            if prost::Message::encode_to_vec(ours) != prost::Message::encode_to_vec(theirs) {
                return Err(format!("{:?} differs between the proto/ and proto-reflection/ descriptor sets", theirs.name).into());
            }
        }
    }
    std::fs::write(out.join("cosmos_descriptor.bin"), prost::Message::encode_to_vec(&cosmos_fds))?;

    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    config.enable_type_names();
    // Maps are BTreeMaps: deterministic iteration and encoding (no HashMap in state).
    config.btree_map(["."]);
    // Shared types come from their upstream crates, so ours and theirs are one type.
    config.extern_path(".cosmos.base.v1beta1", "::cosmos_sdk_proto::cosmos::base::v1beta1");
    config.extern_path(".cosmos.base.query.v1beta1", "::cosmos_sdk_proto::cosmos::base::query::v1beta1");
    config.compile_well_known_types();
    // Timestamps render as the gRPC gateway renders them (RFC 3339 with `Z`).
    config.extern_path(".google.protobuf.Timestamp", "crate::Timestamp");
    // Messages inside messages (a group's proposal) are the Cosmos SDK's own `Any`.
    config.extern_path(".google.protobuf.Any", "::cosmos_sdk_proto::Any");
    config.skip_protoc_run();
    config.file_descriptor_set_path(&descriptor_path);
    config.compile_fds(fds)?;

    let descriptor = std::fs::read(&descriptor_path)?;
    pbjson_build::Builder::new()
        .register_descriptors(&descriptor)?
        .preserve_proto_field_names()
        .emit_fields()
        .extern_path(".cosmos.base.v1beta1", "::cosmos_sdk_proto::cosmos::base::v1beta1")
        .extern_path(".cosmos.base.query.v1beta1", "::cosmos_sdk_proto::cosmos::base::query::v1beta1")
        .btree_map([".chain"])
        .extern_path(".google.protobuf.Timestamp", "crate::Timestamp")
        .extern_path(".google.protobuf.Any", "::cosmos_sdk_proto::Any")
        .build(&[".chain", ".cosmos.evm.erc20"])?;
    Ok(())
}
