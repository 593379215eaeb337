//! Stores of an older state layout are refused at start with a message saying why.

use std::sync::Arc;

use lantau_app::{App, AppConfig, AppError, NoHook};

/// A store written when flags and velocity windows were Merkle keys: the app refuses to open
/// it (it would not see those records) and names them; a store without them opens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_with_flags_or_velocity_windows_in_the_tree_is_refused() {
    for (key, what) in [("compliance/flag/00000000000000000001", "flags"), ("compliance/velocity/00aa", "velocity windows")] {
        let dir = tempfile::tempdir().unwrap();
        let storage = lantau_app::cnidarium::Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
        let mut delta = lantau_app::cnidarium::StateDelta::new(storage.latest_snapshot());
        lantau_app::cnidarium::StateWrite::put_raw(&mut delta, key.to_string(), b"old".to_vec());
        storage.commit(delta).await.unwrap();
        storage.release().await;
        match App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await {
            Err(e @ AppError::OldLayout { .. }) => {
                let m = e.to_string();
                assert!(m.contains(&format!("keeps {what} in the Merkle tree")), "{m}");
            }
            Err(e) => panic!("refused for another reason: {e}"),
            Ok(_) => panic!("a store holding {key} in the tree was opened"),
        }
    }
    // The same records outside the tree are this layout's: the store opens.
    let dir = tempfile::tempdir().unwrap();
    let storage = lantau_app::cnidarium::Storage::load(dir.path().to_path_buf(), vec![]).await.unwrap();
    let mut delta = lantau_app::cnidarium::StateDelta::new(storage.latest_snapshot());
    lantau_app::cnidarium::StateWrite::nonverifiable_put_raw(&mut delta, b"compliance/flag/00000000000000000001".to_vec(), b"new".to_vec());
    storage.commit(delta).await.unwrap();
    storage.release().await;
    let app = App::load(dir.path().to_path_buf(), AppConfig::default(), Arc::new(NoHook)).await.unwrap();
    app.release().await;
}
