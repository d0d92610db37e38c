//! Per-stage cost of the full pipeline on one typical capture (`samples/refund`'s valid
//! proposal: an OpenAI Responses function call that passes every stage), so the next
//! speed-up goes where the time is. Run: `cargo bench --bench stages`.
//!
//! `rules/bind-once+5-rules` is what the pipeline does; `rules/bind-per-rule` is what it
//! would cost to bind the capture's JSON again for each of the five rules.

// a benchmark/example: a failed setup step may panic
#![allow(clippy::unwrap_used)]
#![allow(clippy::result_large_err)]

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::path::Path;
use verdict::core::adapter::{Proposal, adapt_response};
use verdict::core::capture::{Payload, parse_record};
use verdict::core::stage::{intent, parse, schema};
use verdict::core::workspace::Workspace;

fn stages(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/refund");
    let ws = Workspace::open(&root).unwrap();
    let file = root.join("captures/valid-proposal.json");
    let raw = ws.read_file(&file).remove(0);
    let text = raw.text.clone().unwrap();
    let capture = parse_record(&text, &verdict::core::record_ref::RecordRef::new("x", None))
        .ok()
        .unwrap();
    let Payload::Response(response) = &capture.payload else {
        panic!("not a response")
    };
    let Ok(Proposal::Text(output)) = adapt_response(response, None, None).result else {
        panic!("no text")
    };
    let value = parse::parse_strict(&output).unwrap();
    let contract = ws.contracts.get("refund-v1").unwrap();
    let validator = contract.compiled.as_ref().unwrap();
    let rules = contract.rules.as_ref().unwrap();
    let (ctx, int) = (capture.context.as_ref(), capture.intent.as_ref());
    assert!(rules.evaluate(&value, ctx, int).is_none());

    let mut g = c.benchmark_group("stage");
    g.bench_function("1-capture-record-parse", |b| {
        b.iter(|| {
            parse_record(
                black_box(&text),
                &verdict::core::record_ref::RecordRef::new("x", None),
            )
            .ok()
        })
    });
    g.bench_function("2-response-adapter", |b| {
        b.iter(|| adapt_response(black_box(response), None, None))
    });
    g.bench_function("3-strict-parse", |b| {
        b.iter(|| parse::parse_strict(black_box(&output)))
    });
    g.bench_function("4-schema", |b| {
        b.iter(|| schema::validate(validator, black_box(&value), Some(&output)))
    });
    g.bench_function("5-rules-bind-once+5-rules", |b| {
        b.iter(|| rules.evaluate(black_box(&value), ctx, int))
    });
    g.bench_function("5-rules-bind-only", |b| {
        b.iter(|| drop(rules.bind(black_box(&value), ctx, int).context()))
    });
    g.bench_function("5-rules-bind-per-rule", |b| {
        b.iter(|| {
            for _ in 0..rules.rules.len() {
                drop(rules.bind(black_box(&value), ctx, int).context());
            }
            rules.evaluate(black_box(&value), ctx, int)
        })
    });
    g.bench_function("6-intent", |b| {
        b.iter(|| {
            intent::compare(
                black_box(&value),
                int.unwrap(),
                rules.intent_fields.as_deref(),
            )
        })
    });
    g.bench_function("all-evaluate", |b| b.iter(|| ws.evaluate(black_box(&raw))));
    g.finish();
}

criterion_group!(benches, stages);
criterion_main!(benches);
