//! Build facts for `lantaud version --long`: the git commit (when built from a checkout) and
//! the target triple.

fn main() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let commit = std::process::Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".to_string());
    let dirty = std::process::Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["status", "--porcelain", "--untracked-files=no"])
        .output()
        .ok()
        .is_some_and(|o| o.status.success() && !o.stdout.is_empty());
    println!("cargo:rustc-env=LANTAU_GIT_COMMIT={commit}{}", if dirty { "-dirty" } else { "" });
    println!("cargo:rustc-env=LANTAU_TARGET={}", std::env::var("TARGET").unwrap_or_default());
    // A new commit, a checkout or an edit of a tracked file changes these.
    for p in [".git/HEAD", ".git/index"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
}
