//! The TUI at scale (`BENCHMARKS.md`): loads a workspace through the real engine into the real
//! model, draws into ratatui's `TestBackend`, and prints a markdown table. The engine is the
//! workbench's: `Engine::spawn_bounded` with `TUI_BATCHES_IN_FLIGHT`, each batch acknowledged
//! once the model applied it, so the bench measures what users run. The table holds
//!
//! * time to the first frame and to the full load, peak resident memory (`VmHWM`) against
//!   the size of the capture files, and the most captures the engine had sent that the
//!   model had not yet applied (waiting in the channel: what a front end slower than the
//!   engine holds on top of its rows, BENCHMARKS.md "Where the TUI's memory went");
//! * frame render time (median, p99) with everything loaded;
//! * keypress to frame (`App::update(key)` + draw; median, p99) for `j`, `PgDn`, `G`/`g`,
//!   and typing a filter (`/`, then `s`, `c`, `h`, then Backspace);
//! * selection to detail (`j`, then the engine's re-read of the record, then the frame);
//! * with chains (`bench/chains.py`): the chain tree (`c`), moving in it, Enter to expand
//!   and collapse a chain, and `c` back to the list.
//!
//! Not part of `cargo test`. Run it on a generated 1,000,000-record log:
//!
//! ```sh
//! python3 bench/gen.py /tmp/w --n 1000 --m 1000000 --seed 5
//! cargo run --release --example tui_bench -- /tmp/w/workspace
//! ```
//!
//! Options: `--frames N` (frames per measurement, default 300), `--size WxH` (120x40).

// a benchmark/example: a failed setup step may panic
#![allow(clippy::unwrap_used)]

/// The binary's allocator (src/main.rs), so the memory figures are the workbench's.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};
use verdict::core::workspace::Workspace;
use verdict::engine::worker::{Acks, TUI_BATCHES_IN_FLIGHT};
use verdict::engine::{Engine, EngineEvent};
use verdict::tui::app::{App, Msg};
use verdict::tui::ui;

/// `VmHWM` and `VmRSS` from `/proc/self/status`, in bytes.
fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

fn mb(b: u64) -> String {
    format!("{:.0} MB", b as f64 / 1e6)
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

/// Median and p99 of samples.
fn stats(mut v: Vec<Duration>) -> (Duration, Duration, Duration) {
    v.sort();
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99), *v.last().unwrap())
}

struct Bench {
    app: App,
    term: Terminal<TestBackend>,
    engine: Engine,
    rx: Receiver<EngineEvent>,
    /// The acknowledged batch queue, as the workbench's event loop uses it.
    acks: Acks,
}

impl Bench {
    fn draw(&mut self) -> Duration {
        let t = Instant::now();
        let app = &self.app;
        self.term.draw(|f| ui::draw(app, f)).unwrap();
        t.elapsed()
    }

    /// Hands the model's jobs to the engine (as the event loop does).
    fn submit(&mut self) {
        for job in self.app.out.requests.drain(..) {
            self.engine.submit(job);
        }
    }

    /// Applies one engine event and acknowledges it when it is a batch (as the
    /// workbench's `drain` does).
    fn apply(&mut self, e: EngineEvent) {
        let batch = matches!(e, EngineEvent::Batch { .. });
        self.app.update(Msg::Engine(e));
        if batch {
            self.acks.applied();
        }
    }

    /// Applies every engine event already waiting.
    fn drain(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.apply(e);
        }
    }

    /// update(key) + draw.
    fn key(&mut self, code: KeyCode) -> Duration {
        let t = Instant::now();
        self.app
            .update(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)));
        let app = &self.app;
        self.term.draw(|f| ui::draw(app, f)).unwrap();
        t.elapsed()
    }

    /// Finishes a running filter as the event loop does (a slice, a frame, ...); returns
    /// the time taken.
    fn finish(&mut self) -> Duration {
        let t = Instant::now();
        while self.app.busy() {
            self.app.work(verdict::tui::app::FILTER_SLICE);
            self.draw();
        }
        t.elapsed()
    }

    /// Waits for the selected capture's detail (serving its load).
    fn settle(&mut self) {
        self.submit();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.app.detail.loading().is_some() && Instant::now() < deadline {
            if let Ok(e) = self.rx.recv_timeout(Duration::from_millis(100)) {
                self.apply(e);
            }
            self.submit();
        }
    }
}

fn main() {
    // as `verdict::tui::run` does
    verdict::tui::allocator::return_freed_memory_sooner();
    let mut args = std::env::args().skip(1);
    let mut root = None;
    let mut frames = 300usize;
    let (mut w, mut h) = (120u16, 40u16);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--frames" => frames = args.next().and_then(|v| v.parse().ok()).unwrap_or(300),
            "--size" => {
                let v = args.next().unwrap_or_default();
                if let Some((a, b)) = v.split_once('x') {
                    w = a.parse().unwrap_or(120);
                    h = b.parse().unwrap_or(40);
                }
            }
            _ => root = Some(PathBuf::from(a)),
        }
    }
    let Some(root) = root else {
        eprintln!("usage: tui_bench WORKSPACE [--frames N] [--size WxH]");
        std::process::exit(2);
    };
    let (_, rss0) = memory();
    eprintln!("RSS before loading: {}", mb(rss0));
    let start = Instant::now();
    // as the workbench opens it: the config, schemas and joins, no capture file (the
    // engine's pre-pass reads those behind the first frame)
    let ws = Arc::new(Workspace::load(&root).expect("open the workspace"));
    let bytes: u64 = ws
        .capture_files()
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    let (tx, rx) = channel();
    // captures the engine sent in its batches, against those the model applied: the
    // difference is what waits in the channel
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sent_by_engine = sent.clone();
    // the workbench's engine: at most TUI_BATCHES_IN_FLIGHT batches unacknowledged
    let engine = Engine::spawn_bounded(root.clone(), ws.clone(), TUI_BATCHES_IN_FLIGHT, move |e| {
        if let EngineEvent::Batch { captures, .. } = &e {
            sent_by_engine.fetch_add(captures.len(), std::sync::atomic::Ordering::Relaxed);
        }
        tx.send(e).is_ok()
    });
    let acks = engine
        .acks()
        .expect("a bounded engine has acknowledgements");
    let mut b = Bench {
        app: App::new(root.display().to_string(), Some(ws), Rect::new(0, 0, w, h)),
        term: Terminal::new(TestBackend::new(w, h)).unwrap(),
        engine,
        rx,
        acks,
    };
    b.app.request_validation(false);
    b.draw();
    let first_frame = start.elapsed();
    b.submit();
    // the event loop: drain what arrived, draw, about 60 frames a second
    let mut first_rows = None;
    let mut load_frames = Vec::new();
    let mut max_waiting = 0usize;
    while b.app.run.progress.running || b.app.run.progress.total == 0 {
        match b.rx.recv_timeout(Duration::from_millis(16)) {
            Ok(e) => b.apply(e),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(_) => break,
        }
        // sampled before the waiting events are applied
        let waiting = sent
            .load(std::sync::atomic::Ordering::Relaxed)
            .saturating_sub(b.app.run.progress.done);
        max_waiting = max_waiting.max(waiting);
        b.drain();
        b.submit();
        load_frames.push(b.draw());
        if first_rows.is_none() && !b.app.list.view.is_empty() {
            first_rows = Some(start.elapsed());
        }
    }
    let loaded = start.elapsed();
    b.settle();
    let (hwm, rss) = memory();
    let n = b.app.list.store.len();
    let store = b.app.list.store.heap_bytes();

    // frame render with everything loaded
    let render = stats((0..frames).map(|_| b.draw()).collect());
    let (load_p50, load_p99, _) = stats(load_frames);

    // keypress to frame
    let mut rows: Vec<(String, (Duration, Duration, Duration))> = Vec::new();
    let mut j = Vec::new();
    for _ in 0..frames {
        j.push(b.key(KeyCode::Char('j')));
        b.submit();
        b.drain();
    }
    rows.push(("`j` (move down)".into(), stats(j)));
    b.settle();
    let mut detail = Vec::new();
    for _ in 0..frames.min(100) {
        let t = Instant::now();
        b.key(KeyCode::Char('j'));
        b.settle();
        b.draw();
        detail.push(t.elapsed());
    }
    let mut pg = Vec::new();
    for _ in 0..frames {
        pg.push(b.key(KeyCode::PageDown));
        b.submit();
        b.drain();
    }
    rows.push(("`PgDn`".into(), stats(pg)));
    let (mut gl, mut gf) = (Vec::new(), Vec::new());
    for _ in 0..(frames / 2).max(1) {
        gl.push(b.key(KeyCode::Char('G')));
        b.submit();
        b.drain();
        gf.push(b.key(KeyCode::Char('g')));
        b.submit();
        b.drain();
    }
    rows.push(("`G` (last row)".into(), stats(gl)));
    rows.push(("`g` (first row)".into(), stats(gf)));
    b.settle();
    let reps = (frames / 10).max(5);
    let mut filter: [Vec<Duration>; 6] = Default::default();
    let mut complete: [Vec<Duration>; 6] = Default::default();
    let mut matched = [0usize; 5];
    for _ in 0..reps {
        for (i, k) in [
            KeyCode::Char('/'),
            KeyCode::Char('s'),
            KeyCode::Char('c'),
            KeyCode::Char('h'),
            KeyCode::Backspace,
        ]
        .into_iter()
        .enumerate()
        {
            let first = b.key(k);
            filter[i].push(first);
            complete[i].push(first + b.finish());
            matched[i] = b.app.list.view.len();
            b.submit();
            b.drain();
        }
        let esc = b.key(KeyCode::Esc);
        filter[5].push(esc);
        complete[5].push(esc + b.finish());
        b.settle();
    }
    let names = [
        "`/` (start a filter)".to_string(),
        format!("`s` (fuzzy, {} of {n} match)", matched[1]),
        format!("`c` (narrows the view: {} match)", matched[2]),
        format!("`h` (narrows: {} match)", matched[3]),
        format!("Backspace (back to `sc`, full scan: {})", matched[4]),
        "Esc (clear the filter)".to_string(),
    ];
    let mut until_done = Vec::new();
    for ((name, v), c) in names.into_iter().zip(filter).zip(complete) {
        until_done.push((name.clone(), stats(c)));
        rows.push((name, stats(v)));
    }
    // a token filter: decided once per outcome, then one pass over the rows
    let mut tok = Vec::new();
    for _ in 0..reps {
        b.key(KeyCode::Char('/'));
        for c in "stage:schem".chars() {
            b.key(KeyCode::Char(c));
        }
        tok.push(b.key(KeyCode::Char('a')) + b.finish());
        let got = b.app.list.view.len();
        b.key(KeyCode::Esc);
        b.key(KeyCode::Esc);
        b.settle();
        if tok.len() == 1 {
            eprintln!("stage:schema matches {got}");
        }
    }
    rows.push((
        "`a` completing `/stage:schema` (narrows)".into(),
        stats(tok),
    ));
    // the chain grouping (`c`), when the workspace has chains: into it, moving, expanding
    // and collapsing a chain (Enter), and back
    let mut chain_rows: Vec<(String, (Duration, Duration, Duration))> = Vec::new();
    let chains = b.app.chains.tree.view.as_ref().map(|v| {
        (
            v.heads.len(),
            v.heads.iter().map(|h| h.attempts as usize).sum::<usize>(),
        )
    });
    if b.app.chains.tree.any() {
        let (mut into, mut out) = (Vec::new(), Vec::new());
        let (mut cj, mut cpg, mut cgl, mut cgf, mut open, mut close) = (
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        );
        for _ in 0..reps {
            into.push(b.key(KeyCode::Char('c')));
            b.submit();
            b.drain();
            for _ in 0..frames / reps {
                cj.push(b.key(KeyCode::Char('j')));
                b.submit();
                b.drain();
            }
            for _ in 0..(frames / reps / 2).max(1) {
                cpg.push(b.key(KeyCode::PageDown));
                b.submit();
                b.drain();
                open.push(b.key(KeyCode::Enter));
                b.submit();
                b.drain();
                close.push(b.key(KeyCode::Enter));
                b.submit();
                b.drain();
            }
            cgl.push(b.key(KeyCode::Char('G')));
            b.submit();
            b.drain();
            cgf.push(b.key(KeyCode::Char('g')));
            b.submit();
            b.drain();
            out.push(b.key(KeyCode::Char('c')));
            b.settle();
        }
        chain_rows.push(("`c` (into the chain tree)".into(), stats(into)));
        chain_rows.push(("`j` in the chain tree".into(), stats(cj)));
        chain_rows.push(("`PgDn` in the chain tree".into(), stats(cpg)));
        chain_rows.push(("Enter (expand a chain)".into(), stats(open)));
        chain_rows.push(("Enter (collapse it)".into(), stats(close)));
        chain_rows.push(("`G` in the chain tree".into(), stats(cgl)));
        chain_rows.push(("`g` in the chain tree".into(), stats(cgf)));
        chain_rows.push(("`c` (back to the list)".into(), stats(out)));
    }
    let (hwm_end, _) = memory();

    println!(
        "TUI at scale: {} captures from {} of capture files, {w}x{h} TestBackend, {frames} frames per row\n",
        n,
        mb(bytes)
    );
    println!("| measure | value |");
    println!("|---|---|");
    println!(
        "| first frame (before any record is read) | {} |",
        ms(first_frame)
    );
    if let Some(t) = first_rows {
        println!("| first rows on screen | {} |", ms(t));
    }
    println!(
        "| full load (every record validated, sorted) | {:.1} s |",
        loaded.as_secs_f64()
    );
    println!(
        "| peak RSS (VmHWM) after loading | {} ({:.1}% of the file) |",
        mb(hwm),
        hwm as f64 * 100.0 / bytes.max(1) as f64
    );
    println!("| RSS after loading | {} |", mb(rss));
    println!(
        "| most captures sent by the engine and not yet applied (in the channel) | {max_waiting} |"
    );
    println!(
        "| the list's store (rows, text, line index) | {} ({:.0} bytes per capture) |",
        mb(store as u64),
        store as f64 / n.max(1) as f64
    );
    println!("| peak RSS at the end of the run | {} |", mb(hwm_end));
    println!(
        "| frame render while loading (p50 / p99) | {} / {} |",
        ms(load_p50),
        ms(load_p99)
    );
    println!(
        "| frame render, all loaded (p50 / p99 / max) | {} / {} / {} |",
        ms(render.0),
        ms(render.1),
        ms(render.2)
    );
    let d = stats(detail);
    println!(
        "| `j` to the detail shown (re-read + validate + frame; p50 / p99) | {} / {} |",
        ms(d.0),
        ms(d.1)
    );
    println!("\n| keypress to frame (update + draw) | p50 | p99 | max |");
    println!("|---|---|---|---|");
    for (name, (p50, p99, max)) in rows {
        println!("| {name} | {} | {} | {} |", ms(p50), ms(p99), ms(max));
    }
    if let Some((n, attempts)) = chains {
        println!("\n| the chain tree: {n} chains, {attempts} attempts | p50 | p99 | max |");
        println!("|---|---|---|---|");
        for (name, (p50, p99, max)) in chain_rows {
            println!("| {name} | {} | {} | {} |", ms(p50), ms(p99), ms(max));
        }
    }
    println!(
        "\n| filter key to the complete view (slices of {} between frames) | p50 | p99 | max |",
        ms(verdict::tui::app::FILTER_SLICE)
    );
    println!("|---|---|---|---|");
    for (name, (p50, p99, max)) in until_done {
        println!("| {name} | {} | {} | {} |", ms(p50), ms(p99), ms(max));
    }
}
