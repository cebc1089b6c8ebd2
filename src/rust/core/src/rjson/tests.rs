//! Encoder tests over the Rust model of R values. Expected texts were produced
//! with jsonlite 2.0.0 (`toJSON(x, auto_unbox = TRUE, null = "null")` unless
//! stated otherwise).

use super::testvalue::*;
use super::*;

fn j(x: &TV) -> String {
    j_with(x, Options::default())
}

fn j_with(x: &TV, o: Options) -> String {
    String::from_utf8(to_json(x, &o).expect("serializes")).expect("utf8")
}

fn err(x: &TV) -> String {
    to_json(x, &Options::default()).expect_err("must fail")
}

fn na_null() -> Options {
    Options { na: NaOption::Null, ..Options::default() }
}
fn na_string() -> Options {
    Options { na: NaOption::String, ..Options::default() }
}
fn boxed() -> Options {
    Options { auto_unbox: false, ..Options::default() }
}

#[test]
fn atomic_vectors_and_missing_values() {
    let nums = dbl(&[1.0, na_real(), f64::NAN, f64::INFINITY, f64::NEG_INFINITY]);
    assert_eq!(j(&nums), r#"[1,"NA","NaN","Inf","-Inf"]"#);
    assert_eq!(j_with(&nums, na_null()), "[1,null,null,null,null]");
    assert_eq!(j_with(&nums, na_string()), r#"[1,"NA","NaN","Inf","-Inf"]"#);
    assert_eq!(j(&lgl(&[None])), "null");
    assert_eq!(j_with(&lgl(&[None]), na_string()), r#""NA""#);
    assert_eq!(j_with(&lgl(&[None]), boxed()), "[null]");
    assert_eq!(j(&lgl(&[Some(true), Some(false)])), "[true,false]");
    assert_eq!(j(&int(&[NA_INT])), r#""NA""#);
    assert_eq!(j_with(&int(&[NA_INT, 3]), na_null()), "[null,3]");
    assert_eq!(j(&chr(&[Some("a"), None])), r#"["a",null]"#);
    assert_eq!(j_with(&chr(&[Some("a"), None]), na_string()), r#"["a","NA"]"#);
    assert_eq!(j(&dbl(&[])), "[]");
    assert_eq!(j(&dbl(&[2.5])), "2.5");
    assert_eq!(j_with(&dbl(&[2.5]), boxed()), "[2.5]");
    // Names on atomic vectors are dropped.
    assert_eq!(j(&dbl(&[1.0, 2.0]).attr("names", chr(&[Some("a"), Some("b")]))), "[1,2]");
}

#[test]
fn null_and_lists() {
    assert_eq!(j(&null()), "null");
    assert_eq!(j_with(&null(), Options { null: NullMode::List, ..Options::default() }), "{}");
    assert_eq!(j(&list(vec![])), "[]");
    assert_eq!(j(&list(vec![]).attr("names", chr(&[]))), "{}");
    assert_eq!(j(&list(vec![null()])), "[null]");
    assert_eq!(j(&named(vec![(Some("a"), null())])), r#"{"a":null}"#);
    assert_eq!(
        j(&named(vec![(Some("a"), dbl(&[1.0])), (None, dbl(&[2.0])), (Some(""), dbl(&[3.0]))])),
        r#"{"a":1,"2":2,"3":3}"#
    );
    assert_eq!(
        j(&named(vec![(Some("a"), dbl(&[1.0])), (Some("a"), dbl(&[2.0])), (None, dbl(&[3.0]))])),
        r#"{"a":1,"a.1":2,"3":3}"#
    );
    let nested = named(vec![(Some("x"), list(vec![dbl(&[1.0, 2.0]), s("q\"")])), (Some("y"), lgl(&[Some(true)]))]);
    assert_eq!(j(&nested), r#"{"x":[[1,2],"q\""],"y":true}"#);
    assert_eq!(j_with(&nested, boxed()), r#"{"x":[[1,2],["q\""]],"y":[true]}"#);
}

#[test]
fn classes_asis_unbox_json() {
    assert_eq!(j(&dbl(&[1.0]).class(&["AsIs"])), "[1]");
    assert_eq!(j(&list(vec![dbl(&[1.0])]).class(&["AsIs"])), "[1]");
    assert_eq!(j_with(&dbl(&[1.0]).class(&["scalar", "numeric"]), boxed()), "1");
    assert_eq!(j(&s("{\"a\":1}").class(&["json"])), r#""{\"a\":1}""#);
    let f = int(&[1, NA_INT]).attr("levels", chr(&[Some("a")])).class(&["factor"]);
    assert_eq!(j(&f), r#"["a",null]"#);
    // Unknown leading classes are skipped, as jsonlite's ANY method does.
    assert_eq!(j(&list(vec![dbl(&[1.0])]).class(&["foo", "list"])), "[1]");
    let d = dbl(&[18000.0]).class(&["Date"]).attr("formatted", s("2019-04-14"));
    assert_eq!(j(&d), r#""2019-04-14""#);
    assert_eq!(j(&d.clone().class(&["AsIs", "Date"])), r#"["2019-04-14"]"#);
    assert_eq!(j(&raw(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])), r#""AQIDBAUGBwgJCg==""#);
    assert_eq!(j_with(&raw(&[]), boxed()), r#"[""]"#);
    assert_eq!(j_with(&raw(&[0x5a]).class(&["scalar", "raw"]), boxed()), r#""Wg==""#);
}

#[test]
fn data_frames() {
    let x = df(
        vec![("a", dbl(&[1.0, na_real()])), ("b", chr(&[Some("x"), None])), ("c", dbl(&[f64::NAN, f64::INFINITY]))],
        2,
    );
    assert_eq!(j(&x), r#"[{"a":1,"b":"x"},{}]"#);
    assert_eq!(j_with(&x, na_null()), r#"[{"a":1,"b":"x","c":null},{"a":null,"b":null,"c":null}]"#);
    assert_eq!(j_with(&x, na_string()), r#"[{"a":1,"b":"x","c":"NaN"},{"a":"NA","b":"NA","c":"Inf"}]"#);
    let rn = df(vec![("mpg", dbl(&[21.0, 22.8]))], 2).attr("row.names", chr(&[Some("Mazda RX4"), Some("Datsun 710")]));
    assert_eq!(j(&rn), r#"[{"mpg":21,"_row":"Mazda RX4"},{"mpg":22.8,"_row":"Datsun 710"}]"#);
    // An existing "_row" column is replaced by the row names before it is looked at.
    let clash = df(vec![("_row", other("environment")), ("v", int(&[1, 2]))], 2)
        .attr("row.names", chr(&[Some("a"), Some("b")]));
    assert_eq!(j(&clash), r#"[{"_row":"a","v":1},{"_row":"b","v":2}]"#);
    let numeric_rn = df(vec![("v", int(&[1, 2]))], 2).attr("row.names", chr(&[Some("3"), Some("4")]));
    assert_eq!(j(&numeric_rn), r#"[{"v":1},{"v":2}]"#);
    let lc = df(vec![("l", list(vec![dbl(&[1.0]), int(&[2, 3]), null(), dbl(&[na_real()])]))], 4);
    assert_eq!(j(&lc), r#"[{"l":1},{"l":[2,3]},{"l":null},{"l":"NA"}]"#);
    let inner = df(vec![("y", dbl(&[1.5, na_real()]))], 2);
    let outer = df(vec![("x", int(&[1, 2])), ("n", inner)], 2);
    assert_eq!(j(&outer), r#"[{"x":1,"n":{"y":1.5}},{"x":2,"n":{}}]"#);
    assert_eq!(j(&df(vec![("a", dbl(&[]))], 0)), "[]");
    let nocols = list(vec![]).attr("names", chr(&[])).attr("row.names", int(&[NA_INT, -3])).class(&["data.frame"]);
    assert_eq!(j(&nocols), "[{},{},{}]");
    let rawcol = df(vec![("r", raw(&[0, 15, 16, 255]))], 4);
    assert_eq!(j(&rawcol), r#"[{"r":"0"},{"r":"f"},{"r":"10"},{"r":"ff"}]"#);
    let one = df(vec![("a", dbl(&[1.0]))], 1).class(&["scalar", "data.frame"]);
    assert_eq!(j(&list(vec![one])), r#"[{"a":1}]"#);
    let bad = df(vec![("a", dbl(&[1.0]))], 2);
    assert!(err(&bad).contains("1 values for 2 rows"));
}

#[test]
fn matrices_and_arrays() {
    let a = int(&(1..=24).collect::<Vec<_>>()).attr("dim", int(&[2, 3, 4]));
    assert_eq!(j(&a), "[[[1,7,13,19],[3,9,15,21],[5,11,17,23]],[[2,8,14,20],[4,10,16,22],[6,12,18,24]]]");
    assert_eq!(j(&dbl(&[]).attr("dim", int(&[0, 3]))), "[]");
    assert_eq!(j(&dbl(&[]).attr("dim", int(&[3, 0]))), "[[],[],[]]");
    assert_eq!(j(&dbl(&[]).attr("dim", int(&[2, 0, 3]))), "[[],[]]");
    assert_eq!(j(&dbl(&[]).attr("dim", int(&[2, 3, 0]))), "[[[],[],[]],[[],[],[]]]");
    assert_eq!(j(&dbl(&[5.0]).attr("dim", int(&[1]))), "[5]");
    assert_eq!(j(&raw(&[0x26]).attr("dim", int(&[1, 1]))), r#"[["Jg=="]]"#);
    assert!(err(&raw(&[1, 2]).attr("dim", int(&[1, 2]))).contains("raw matrix"));
    let lm = list(vec![dbl(&[1.0]), s("a"), null(), named(vec![(Some("b"), dbl(&[2.0]))])]).attr("dim", int(&[2, 2]));
    assert_eq!(j(&lm), r#"[[[1],null],[["a"],{"b":[2]}]]"#);
    let m = dbl(&[1.0, na_real(), 3.0, 4.0]).attr("dim", int(&[2, 2]));
    assert_eq!(j_with(&m, na_null()), "[[1,3],[null,4]]");
    let mts = int(&[1, 2, 3, 4, 5, 6]).attr("dim", int(&[3, 2])).class(&["mts", "ts", "matrix", "array"]);
    assert_eq!(j(&mts), "[[1,4],[2,5],[3,6]]");
    assert_eq!(j(&int(&[1, 2, 3, 4]).attr("dim", int(&[2, 2])).class(&["ts"])), "[1,2,3,4]");
    let dfm = df(vec![("m", m)], 2);
    assert_eq!(j(&dfm), r#"[{"m":[1,3]},{"m":["NA",4]}]"#);
}

#[test]
fn unsupported_values_name_their_type() {
    assert!(err(&other("environment")).contains("'environment'"));
    assert!(err(&other("closure")).contains("function"));
    assert!(err(&other("externalptr")).contains("'externalptr'"));
    assert!(err(&list(vec![dbl(&[1.0])]).class(&["foo"])).contains("'foo'"));
    assert!(err(&list(vec![]).class(&["Thing"]).s4()).contains("S4"));
    // Each says what to return instead.
    assert_eq!(
        err(&list(vec![dbl(&[1.0])]).class(&["summary.lm"])),
        "cannot convert an object of class 'summary.lm' to JSON: no mapping for that class; return a list of the \
         parts you need, a data frame, `unclass(x)`, or text from `paste(capture.output(print(x)), collapse = \"\\n\")`"
    );
    assert!(err(&list(vec![]).class(&["glm", "lm"])).contains("class 'glm'"));
    assert!(err(&other("environment")).contains("`as.list(x)`"));
    assert!(err(&other("language")).contains("`deparse(x)`"));
    assert!(err(&other("closure")).contains("return what it computes"));
    assert!(err(&named(vec![(Some("e"), other("environment"))])).contains("environment"));
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let mut x = dbl(&[1.0]);
    for _ in 0..(MAX_DEPTH - 1) {
        x = list(vec![x]);
    }
    let out = j(&x);
    assert_eq!(out, format!("{}1{}", "[".repeat(MAX_DEPTH - 1), "]".repeat(MAX_DEPTH - 1)));
    let mut y = x.clone();
    for _ in 0..10_000 {
        y = named(vec![(Some("a"), y)]);
    }
    assert!(err(&y).contains("nested too deeply"));
    // Dropping 10k nested Rc values recursively would itself overflow; leak it.
    std::mem::forget(y);
}

/// Uniform numbers in [0, 1) from a fixed seed (xorshift), for the timing
/// harnesses.
/// Strings cached by identity are written exactly as strings read one by
/// one: frames and vectors of many shapes (few or many distinct values, NAs,
/// texts needing escapes, texts too long to cache, a column that turns its
/// cache off half way), with and without string keys.
#[test]
fn cached_strings_match_strings_read_one_by_one() {
    let mut rnd = uniform();
    let pool: Vec<String> = (0..600)
        .map(|k| match k % 6 {
            0 => format!("v{k}"),
            1 => format!("q\"{k}\"\n"),
            2 => format!("d\u{e9}j\u{e0} {k} </script>"),
            3 => "x".repeat(k % 130),
            4 => format!("tab\t{k}\u{1}"),
            _ => String::new(),
        })
        .collect();
    for case in 0..400 {
        let n = [0, 1, 63, 64, 65, 300, 1000, 2500][case % 8];
        let distinct = [1, 2, 4, 40, 255, 600][(case / 8) % 6];
        let na_share = [0.0, 0.1, 0.5, 1.0][(case / 48) % 4];
        let vals: Vec<Option<&str>> = (0..n)
            .map(|i| {
                if rnd() < na_share {
                    return None;
                }
                // Every 13th case: distinct values first, then repeats.
                let k = if case % 13 == 7 && i < n / 2 { i % pool.len() } else { (rnd() * distinct as f64) as usize };
                Some(pool[k].as_str())
            })
            .collect();
        let nums: Vec<f64> = (0..n).map(|i| i as f64 / 3.0).collect();
        for o in [Options::default(), na_null(), na_string()] {
            let keyed = df(vec![("s", chr(&vals)), ("x", dbl(&nums)), ("t", chr(&vals))], n as i32);
            let plain = df(vec![("s", chr_unkeyed(&vals)), ("x", dbl(&nums)), ("t", chr_unkeyed(&vals))], n as i32);
            assert_eq!(j_with(&keyed, o), j_with(&plain, o), "frame, case {case}");
            assert_eq!(j_with(&chr(&vals), o), j_with(&chr_unkeyed(&vals), o), "vector, case {case}");
        }
    }
}

/// Data-frame rows written through the row cursor (numbers, logicals and
/// cached strings in their common forms, missing values as dropped
/// stand-ins) are what the general path writes for each cell: every row is
/// compared with its cells serialized one at a time, over values on both
/// sides of every fast-path limit and every digits setting.
#[test]
fn rows_match_their_cells_written_one_by_one() {
    let mut rnd = uniform();
    let n = 3000;
    let dbl_pool = [
        0.5,
        -0.25,
        1e-5,
        2e-5,
        -9.99995e-6,
        9999.49996,
        9999.99996,
        -9999.99994,
        10_000.0,
        123_456.789,
        1e8 + 0.5,
        2147483647.5,
        3e10,
        1e300,
        -0.0,
        0.0,
        5e-324,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        na_real(),
    ];
    let a: Vec<f64> = (0..n)
        .map(|_| if rnd() < 0.5 { dbl_pool[(rnd() * dbl_pool.len() as f64) as usize] } else { (rnd() - 0.5) * 2e4 })
        .collect();
    let int_pool = [0, -1, 7, 99_999_999, -99_999_999, 100_000_000, -100_000_000, i32::MAX, -i32::MAX, NA_INT];
    let b: Vec<i32> = (0..n).map(|_| int_pool[(rnd() * int_pool.len() as f64) as usize]).collect();
    let c: Vec<Option<bool>> = (0..n).map(|_| [Some(true), Some(false), None][(rnd() * 3.0) as usize]).collect();
    let d: Vec<Option<&str>> =
        (0..n).map(|_| [Some("x"), None, Some("y \"q\""), Some("")][(rnd() * 4.0) as usize]).collect();
    let x = df(vec![("a", dbl(&a)), ("bee", int(&b)), ("c", lgl(&c)), ("a long column name", chr(&d))], n as i32);
    // Every digits setting: decimals 0-15, significant digits 1-15, and NA.
    let settings = (0..=15).map(Digits::Decimal).chain((1..=15).map(Digits::Significant)).chain([Digits::Max]);
    for digits in settings {
        let o = Options { digits, ..Options::default() };
        let cell = |v: TV| j_with(&v, o);
        let mut want = String::from("[");
        for i in 0..n {
            let mut fields = Vec::new();
            if a[i].is_finite() {
                fields.push(format!("\"a\":{}", cell(dbl(&[a[i]]))));
            }
            if b[i] != NA_INT {
                fields.push(format!("\"bee\":{}", cell(int(&[b[i]]))));
            }
            if let Some(v) = c[i] {
                fields.push(format!("\"c\":{v}"));
            }
            if let Some(v) = d[i] {
                fields.push(format!("\"a long column name\":{}", cell(s(v))));
            }
            want.push_str(if i > 0 { ",{" } else { "{" });
            want.push_str(&fields.join(","));
            want.push('}');
        }
        want.push(']');
        assert_eq!(j_with(&x, o), want, "{digits:?}");
    }
}

fn uniform() -> impl FnMut() -> f64 {
    let mut st = 0x9E3779B97F4A7C15u64;
    move || {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        (st >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Runs `body` five times and prints the time per item of the last four.
fn time_rounds(label: &str, per: usize, mut body: impl FnMut()) {
    for round in 0..5 {
        let t = std::time::Instant::now();
        body();
        if round > 0 {
            eprintln!("{label}: {:.2} ns each", t.elapsed().as_nanos() as f64 / per as f64);
        }
    }
}

/// Timing harness: jsonlite's default number format (4 decimals) on the
/// numeric frame's kinds of values, per number.
#[test]
#[ignore]
fn dtoa_speed() {
    let mut rnd = uniform();
    let mut vals = Vec::new();
    for _ in 0..1_000_000 {
        vals.push(rnd() * 1e4);
        vals.push((rnd() - 0.5) * 3.0);
        vals.push((rnd() * 100.0).round() / 100.0);
    }
    let mut out = Vec::with_capacity(40 * vals.len());
    time_rounds("write_f64, 4 decimals", vals.len(), || {
        out.clear();
        for &v in &vals {
            super::number::write_f64(&mut out, v, Digits::Decimal(4));
            out.push(b',');
        }
    });
}

/// Timing harness: escaping short strings (bench/json's character frame,
/// in random order), per string.
#[test]
#[ignore]
fn short_string_speed() {
    let mut rnd = uniform();
    let sv = ["alpha", "beta \"quoted\"", "gamma\n", "d\u{e9}j\u{e0} vu"];
    let mut strs: Vec<String> = Vec::new();
    for i in 0..1_000_000usize {
        strs.push(sv[(rnd() * 4.0) as usize].to_string());
        strs.push(format!("id-{:08}", i + 1));
    }
    let mut out = Vec::with_capacity(40_000_000);
    time_rounds("short strings", strs.len(), || {
        out.clear();
        for x in &strs {
            super::write_json_string(&mut out, x.as_bytes());
        }
    });
}

/// Timing harness, not a test: `tools/cargo.sh test -p mcplite-core --release
/// --lib -- --ignored --nocapture encoder_speed` prints the serializer's
/// throughput on frames like bench/json's, without R in the way.
#[test]
#[ignore]
fn encoder_speed() {
    let n = 100_000usize;
    let mut rnd = uniform();
    let ids: Vec<i32> = (1..=n as i32).collect();
    let vals: Vec<f64> = (0..n).map(|_| ((rnd() - 0.5) * 4e6).round() / 1e6).collect();
    let groups = ["alpha", "beta", "gamma", "delta"];
    let grp: Vec<Option<&str>> = (0..n).map(|_| Some(groups[(rnd() * 4.0) as usize])).collect();
    let flags: Vec<Option<bool>> = (0..n).map(|_| Some(rnd() > 0.5)).collect();
    let mixed =
        df(vec![("id", int(&ids)), ("value", dbl(&vals)), ("group", chr(&grp)), ("flag", lgl(&flags))], n as i32);
    let a: Vec<f64> = (0..n).map(|_| rnd() * 1e4).collect();
    let b: Vec<f64> = (0..n).map(|_| (rnd() - 0.5) * 3.0).collect();
    let d: Vec<f64> = (0..n).map(|_| (rnd() * 100.0).round() / 100.0).collect();
    let numeric = df(vec![("a", dbl(&a)), ("b", dbl(&b)), ("c", int(&ids)), ("d", dbl(&d))], n as i32);
    let sv = ["alpha", "beta \"quoted\"", "gamma\n", "d\u{e9}j\u{e0} vu"];
    let strs: Vec<Option<&str>> = (0..n).map(|_| Some(sv[(rnd() * 4.0) as usize])).collect();
    let idv: Vec<String> = (0..n).map(|i| format!("id-{:08}", i + 1)).collect();
    let idr: Vec<Option<&str>> = idv.iter().map(|x| Some(x.as_str())).collect();
    let character = df(vec![("s", chr(&strs)), ("id", chr(&idr))], n as i32);
    // bench/json's NA-heavy frame: each cell NA with probability 1/2.
    let mut na = || rnd() < 0.5;
    let na_a: Vec<f64> = (0..n).map(|i| if na() { na_real() } else { a[i] / 1e4 }).collect();
    let na_b: Vec<Option<&str>> = (0..n).map(|i| if na() { None } else { Some(["x", "y"][i % 2]) }).collect();
    let na_c: Vec<Option<bool>> = (0..n).map(|i| if na() { None } else { Some(i % 3 == 0) }).collect();
    let na_d: Vec<i32> = (0..n).map(|i| if na() { NA_INT } else { ids[i] }).collect();
    let na_heavy = df(vec![("a", dbl(&na_a)), ("b", chr(&na_b)), ("c", lgl(&na_c)), ("d", int(&na_d))], n as i32);
    let text = String::from_utf8(to_json(&mixed, &Options::default()).expect("json")).expect("utf8");
    let long = s(&text);
    for (name, x, o) in [
        ("mixed", &mixed, Options::default()),
        ("numeric", &numeric, Options::default()),
        ("numeric digits=NA", &numeric, Options { digits: Digits::Max, ..Options::default() }),
        ("numeric I(15)", &numeric, Options { digits: Digits::Significant(15), ..Options::default() }),
        ("character", &character, Options::default()),
        ("na_heavy", &na_heavy, Options::default()),
        ("long JSON text as a string", &long, Options::default()),
    ] {
        let mut best = f64::INFINITY;
        let mut bytes = 0;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            let out = to_json(x, &o).expect("json");
            best = best.min(t.elapsed().as_secs_f64());
            bytes = out.len();
        }
        println!("{name:28} {:7.2} ms  {:6.0} MB/s  ({} bytes)", best * 1e3, bytes as f64 / best / 1e6, bytes);
        // The same into a buffer reused between calls (no fresh pages).
        let mut best = f64::INFINITY;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            with_json(x, &o, |b| assert!(!b.is_empty())).expect("json");
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{:28} {:7.2} ms  {:6.0} MB/s", "  reused buffer", best * 1e3, bytes as f64 / best / 1e6);
    }
    let plain = s(&"All work and no play makes Jack a dull boy. ".repeat(250_000));
    let mut best = f64::INFINITY;
    let mut bytes = 0;
    for _ in 0..15 {
        let t = std::time::Instant::now();
        let out = to_json(&plain, &Options::default()).expect("json");
        best = best.min(t.elapsed().as_secs_f64());
        bytes = out.len();
    }
    println!(
        "{:28} {:7.2} ms  {:6.0} MB/s  ({} bytes)",
        "long plain text",
        best * 1e3,
        bytes as f64 / best / 1e6,
        bytes
    );
    // For comparison: serde_json writing the same JSON text as a string.
    let jtext = String::from_utf8(to_json(&mixed, &Options::default()).expect("json")).expect("utf8");
    let mut best = f64::INFINITY;
    for _ in 0..15 {
        let t = std::time::Instant::now();
        let out = serde_json::to_string(&jtext).expect("serde");
        best = best.min(t.elapsed().as_secs_f64());
        bytes = out.len();
    }
    println!("{:28} {:7.2} ms  {:6.0} MB/s", "  (serde_json, same text)", best * 1e3, bytes as f64 / best / 1e6);
    let mut best = f64::INFINITY;
    for _ in 0..15 {
        let t = std::time::Instant::now();
        let v: Result<serde_json::Value, _> = serde_json::from_slice(jtext.as_bytes());
        assert!(v.is_ok());
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{:28} {:7.2} ms  {:6.0} MB/s",
        "  (serde_json parse, mixed)",
        best * 1e3,
        jtext.len() as f64 / best / 1e6
    );
    for (name, x) in
        [("check_compact mixed", &mixed), ("check_compact plain string", &plain), ("check_compact JSON-in-str", &long)]
    {
        let ok = to_json(x, &Options::default()).expect("json");
        let mut best = f64::INFINITY;
        for _ in 0..15 {
            let t = std::time::Instant::now();
            assert!(crate::json::check_compact(&ok, MAX_DEPTH).is_ok());
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{:28} {:7.2} ms  {:6.0} MB/s", name, best * 1e3, ok.len() as f64 / best / 1e6);
    }
}

/// Everything the serializer writes passes; every way of breaking it fails.
#[cfg(test)]
mod compact_properties {
    use crate::json::check_compact;
    use crate::rjson::testvalue::*;
    use crate::rjson::{to_json, Digits, NaOption, NullMode, Options, MAX_DEPTH};
    use proptest::prelude::*;

    fn check_compact_json(b: &[u8]) -> Result<(), crate::json::ParseError> {
        check_compact(b, MAX_DEPTH)
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{0,6}",
            "\\PC{0,12}",
            proptest::collection::vec(
                prop_oneof![
                    Just('"'),
                    Just('\\'),
                    Just('/'),
                    Just('<'),
                    Just('\n'),
                    Just('\u{1}'),
                    Just('\u{1f}'),
                    Just('\u{7f}'),
                    Just('\u{e9}'),
                    Just('\u{1F600}'),
                    Just('\u{2028}'),
                    any::<char>()
                ],
                0..16
            )
            .prop_map(|v| v.into_iter().collect()),
        ]
    }

    fn double() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-1e6f64..1e6),
            Just(na_real()),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(5e-324),
            Just(1e300),
        ]
    }

    fn leaf() -> impl Strategy<Value = TV> {
        prop_oneof![
            Just(null()),
            proptest::collection::vec(double(), 0..5).prop_map(|v| dbl(&v)),
            proptest::collection::vec(prop_oneof![any::<i32>(), Just(NA_INT)], 0..5).prop_map(|v| int(&v)),
            proptest::collection::vec(proptest::option::of(any::<bool>()), 0..5).prop_map(|v| lgl(&v)),
            proptest::collection::vec(proptest::option::of(text()), 0..5).prop_map(|v| {
                let r: Vec<Option<&str>> = v.iter().map(|s| s.as_deref()).collect();
                chr(&r)
            }),
            proptest::collection::vec(0i32..4, 0..5).prop_map(|v| {
                let codes: Vec<i32> = v.iter().map(|&c| if c == 0 { NA_INT } else { c }).collect();
                int(&codes).attr("levels", chr(&[Some("a"), Some("b \""), Some("\u{e9}")])).class(&["factor"])
            }),
            proptest::collection::vec(any::<u8>(), 0..6).prop_map(|v| raw(&v)),
        ]
    }

    fn value() -> impl Strategy<Value = TV> {
        leaf().prop_recursive(4, 40, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(list),
                proptest::collection::vec((proptest::option::of(text()), inner.clone()), 0..5).prop_map(|v| {
                    let names: Vec<Option<&str>> = v.iter().map(|(n, _)| n.as_deref()).collect();
                    list(v.iter().map(|(_, x)| x.clone()).collect()).attr("names", chr(&names))
                }),
                // A data frame: columns of one length, optionally a list column.
                (0usize..4, proptest::collection::vec(0u8..4, 1..4), inner).prop_map(|(n, kinds, cell)| {
                    let cols: Vec<(String, TV)> = kinds
                        .iter()
                        .enumerate()
                        .map(|(j, k)| {
                            let col = match k {
                                0 => dbl(&(0..n)
                                    .map(|i| if i == 1 { na_real() } else { i as f64 / 3.0 })
                                    .collect::<Vec<_>>()),
                                1 => int(&(0..n as i32).map(|i| if i == 2 { NA_INT } else { i }).collect::<Vec<_>>()),
                                2 => chr(&(0..n).map(|i| if i == 0 { None } else { Some("x\"y") }).collect::<Vec<_>>()),
                                _ => list((0..n).map(|_| cell.clone()).collect()),
                            };
                            (format!("c{}", j % 2), col)
                        })
                        .collect();
                    df(cols.iter().map(|(k, v)| (k.as_str(), v.clone())).collect(), n as i32)
                }),
            ]
        })
    }

    fn options() -> impl Strategy<Value = Options> {
        (
            prop_oneof![Just(NullMode::Null), Just(NullMode::List)],
            prop_oneof![Just(NaOption::Unset), Just(NaOption::Null), Just(NaOption::String)],
            any::<bool>(),
            prop_oneof![
                (0i32..12).prop_map(Digits::Decimal),
                (1i32..17).prop_map(Digits::Significant),
                Just(Digits::Max)
            ],
        )
            .prop_map(|(null, na, auto_unbox, digits)| Options { null, na, auto_unbox, digits })
    }

    /// (opening quote, closing quote) offsets of every string in a valid text.
    fn strings(t: &[u8]) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if t[i] == b'"' {
                let open = i;
                i += 1;
                while t[i] != b'"' {
                    i += if t[i] == b'\\' { 2 } else { 1 };
                }
                out.push((open, i));
            }
            i += 1;
        }
        out
    }

    /// Offsets outside every string where a byte can be inserted.
    fn outside(t: &[u8]) -> Vec<usize> {
        let s = strings(t);
        (0..=t.len()).filter(|&p| !s.iter().any(|&(o, c)| p > o && p <= c)).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        #[test]
        fn serializer_output_passes(x in value(), o in options()) {
            let t = to_json(&x, &o);
            // (Values the serializer refuses are rare here; too many would fail the test.)
            prop_assume!(t.is_ok());
            let t = t.unwrap_or_default();
            prop_assert_eq!(check_compact_json(&t), Ok(()), "{}", String::from_utf8_lossy(&t));
        }

        #[test]
        fn broken_output_fails(x in value(), o in options(), how in 0u8..9, pick in any::<prop::sample::Index>(), byte in 0u8..0x20) {
            let t = to_json(&x, &o);
            prop_assume!(t.is_ok());
            let t = t.unwrap_or_default();
            let strs = strings(&t);
            let ends_in_digit = t.last().is_some_and(u8::is_ascii_digit);
            let mut m = t.clone();
            match how {
                // Whitespace outside strings.
                0 => {
                    let out = outside(&t);
                    m.insert(out[pick.index(out.len())], [b' ', b'\n', b'\t', b'\r'][byte as usize % 4]);
                }
                // A raw control byte inside a string.
                1 => {
                    if strs.is_empty() { return Ok(()) }
                    let (open, _) = strs[pick.index(strs.len())];
                    m.insert(open + 1, byte);
                }
                // Truncated.
                2 => {
                    if ends_in_digit { return Ok(()) }
                    m.truncate(pick.index(t.len()));
                }
                // Something appended.
                3 => m.push(b",]}:x \"[{"[byte as usize % 9]),
                // An invalid escape.
                4 => {
                    if strs.is_empty() { return Ok(()) }
                    let (open, _) = strs[pick.index(strs.len())];
                    let bad: &[u8] = [b"\\x".as_slice(), b"\\u12g4", b"\\ud800", b"\\udc00", b"\\'"][byte as usize % 5];
                    m.splice(open + 1..open + 1, bad.iter().copied());
                }
                // Invalid UTF-8 inside a string, or anywhere.
                5 => {
                    let at = if strs.is_empty() { pick.index(t.len() + 1) } else { strs[pick.index(strs.len())].0 + 1 };
                    m.insert(at, [0xff, 0x80, 0xc3, 0xed][byte as usize % 4]);
                }
                // Two values.
                6 => {
                    if ends_in_digit { return Ok(()) }
                    m.extend_from_slice(&t);
                }
                // A stray comma before a closing bracket or at the start.
                7 => {
                    let closes: Vec<usize> = (0..t.len()).filter(|&p| matches!(t[p], b']' | b'}') && outside(&t).contains(&p)).collect();
                    if closes.is_empty() { m.insert(0, b','); } else { m.insert(closes[pick.index(closes.len())], b','); }
                }
                // Nested one level past the limit.
                _ => {
                    let d = crate::rjson::MAX_DEPTH;
                    m = [vec![b'['; d + 1], t.clone(), vec![b']'; d + 1]].concat();
                }
            }
            prop_assert!(check_compact_json(&m).is_err(), "accepted: {}", String::from_utf8_lossy(&m));
        }
    }
}

/// The compact check alone, on frame JSON and on JSON text in a string
/// (`perf record` this test to profile it).
#[test]
#[ignore]
fn check_compact_loop() {
    let mut rnd = uniform();
    let n = 100_000;
    let ids: Vec<i32> = (1..=n as i32).collect();
    let vals: Vec<f64> = (0..n).map(|_| rnd()).collect();
    let grp: Vec<Option<&str>> = (0..n).map(|i| Some(["a", "b \"q\"", "c\n"][i % 3])).collect();
    let flags: Vec<Option<bool>> = (0..n).map(|i| [Some(true), Some(false), None][i % 3]).collect();
    let mixed =
        df(vec![("id", int(&ids)), ("value", dbl(&vals)), ("group", chr(&grp)), ("flag", lgl(&flags))], n as i32);
    let ok = to_json(&mixed, &Options::default()).expect("json");
    let long = to_json(&s(std::str::from_utf8(&ok).unwrap()), &Options::default()).expect("json");
    for (name, text) in [("frame", &ok), ("json in string", &long)] {
        let mut best = f64::INFINITY;
        for _ in 0..30 {
            let t = std::time::Instant::now();
            assert!(crate::json::check_compact(text, MAX_DEPTH).is_ok());
            best = best.min(t.elapsed().as_secs_f64());
        }
        println!("{name}: {:.0} MB/s", text.len() as f64 / 1e6 / best);
    }
}

/// Whether serializing `x` wrote a finite non-zero number as 0, and the text.
fn zeroed_after(x: &TV, o: Options) -> (bool, String) {
    take_zeroed();
    let text = j_with(x, o);
    (take_zeroed(), text)
}

#[test]
fn a_non_zero_number_written_as_zero_is_noted() {
    let four = Options::default();
    // Vectors, scalars, list members, data-frame cells (the row loop's short
    // path and the general one), negative numbers, each written as 0.
    for (x, text) in [
        (dbl(&[1.2e-5, 1.0]), "[0,1]"),
        (dbl(&[4.9e-5]), "0"),
        (dbl(&[-3e-5]), "-0"),
        (named(vec![(Some("p"), dbl(&[2e-5]))]), r#"{"p":0}"#),
        (df(vec![("p", dbl(&[0.5, 3e-5]))], 2), r#"[{"p":0.5},{"p":0}]"#),
        (df(vec![("p", dbl(&[3e-5, 1e9]))], 2), r#"[{"p":0},{"p":1000000000}]"#),
    ] {
        assert_eq!(zeroed_after(&x, four), (true, text.to_string()), "{text}");
    }
    // Zeros that are zeros, numbers kept, tiny numbers jsonlite writes with
    // significant digits, and other digit settings: nothing to say.
    for x in [dbl(&[0.0, 1.0, 6e-5, 1e-6]), df(vec![("p", dbl(&[0.0, 0.25, 6e-5]))], 3)] {
        assert!(!zeroed_after(&x, four).0);
    }
    for digits in [Digits::Significant(4), Digits::Max] {
        assert!(!zeroed_after(&dbl(&[1.2e-5]), Options { digits, ..four }).0);
    }
    assert!(zeroed_after(&dbl(&[0.04]), Options { digits: Digits::Decimal(1), ..four }).0);
    assert!(!zeroed_after(&dbl(&[0.06]), Options { digits: Digits::Decimal(1), ..four }).0);
    // At half a unit, whichever way it rounds, the note says what was written
    // (the row loop's short path leaves such values to the noting path).
    for x in [0.05, 0.050001, 0.0499999] {
        let frame = df(vec![("p", dbl(&[x]))], 1);
        let (noted, text) = zeroed_after(&frame, Options { digits: Digits::Decimal(1), ..four });
        assert_eq!(noted, text == r#"[{"p":0}]"#, "{x}: {text}");
    }
    // Asking clears it.
    assert!(!take_zeroed());
}
