//! The hook's rows of a block are made while it executes, on a thread of their own: they are
//! the rows the finished block makes at once, each transaction handed over once, in block
//! order, with the result FinalizeBlock returns.

use std::sync::Arc;

use lantau_app::tendermint::abci::{request, response, types::ExecTxResult};
use lantau_app::{App, AppConfig, BlockHook, BlockRows};
use parking_lot::Mutex;

use crate::determinism::{block_req, blocks, genesis, key, test_params};

/// A block's rows.
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// The rows of each block a hook finished, in order.
type Made = Arc<Mutex<Vec<Rows>>>;

/// A hook whose rows name each transaction handed to it (its index, bytes, code, gas and
/// events) and the block, and that keeps the rows it made.
#[derive(Default)]
struct Recorder {
    made: Made,
}

struct Recording {
    height: u64,
    rows: Rows,
    made: Option<Made>,
}

impl BlockHook for Recorder {
    fn begin_block(&self, height: u64) -> Box<dyn BlockRows> {
        Box::new(Recording { height, rows: Vec::new(), made: Some(self.made.clone()) })
    }
}

impl BlockRows for Recording {
    fn tx(&mut self, index: u32, tx: &[u8], result: &ExecTxResult) {
        let key = [b"x/".as_slice(), &self.height.to_be_bytes(), &index.to_be_bytes()].concat();
        let value = format!("{}|{}|{}|{}|{:?}", const_hex::encode(tx), result.code.value(), result.gas_used, result.log, result.events);
        self.rows.push((key, value.into_bytes()));
    }

    fn finish(self: Box<Self>, req: &request::FinalizeBlock, resp: &response::FinalizeBlock) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut rows = self.rows;
        rows.push((format!("b/{}", self.height).into_bytes(), format!("{} {} {}", req.txs.len(), resp.tx_results.len(), resp.events.len()).into_bytes()));
        if let Some(made) = self.made {
            made.lock().push(rows.clone());
        }
        rows
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocks_rows_made_during_execution_are_those_of_the_finished_block() {
    let keys: Vec<_> = (0..8).map(key).collect();
    let hook = Arc::new(Recorder::default());
    let dir = tempfile::tempdir().unwrap();
    let app = App::load(dir.path().to_path_buf(), AppConfig::default(), hook.clone()).await.unwrap();
    app.init_chain(request::InitChain {
        time: lantau_app::tendermint::Time::from_unix_timestamp(1_700_000_000, 0).unwrap(),
        chain_id: "det-1".into(),
        consensus_params: test_params(),
        validators: vec![],
        app_state_bytes: genesis(&keys).into(),
        initial_height: 1u32.into(),
    })
    .await
    .unwrap();
    for (i, mut txs) in blocks(&keys).into_iter().enumerate() {
        // Blocks larger than one hand-over to the rows' thread: undecodable bytes, each
        // different, recorded as failures between the transfers.
        let garbage: Vec<Vec<u8>> = (0..150u32).map(|n| [n.to_be_bytes().as_slice(), &[0xff; 3]].concat()).collect();
        txs.splice(2..2, garbage);
        let height = u64::try_from(i).unwrap() + 1;
        let req = block_req(height, &txs);
        let resp = app.finalize_block(req.clone()).await.unwrap();
        app.commit().await.unwrap();
        assert!(resp.tx_results.iter().filter(|r| r.code.is_ok()).count() >= 4, "the block's transfers ran");
        let made = hook.made.lock().pop().expect("the block's rows were made");
        let at_once = Recorder::default().rows_of(&req, &resp);
        assert_eq!(made.len(), txs.len() + 1);
        assert_eq!(made, at_once, "height {height}");
    }
}
