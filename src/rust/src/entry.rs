//! The `.Call` entry points a server reaches, written without extendr's
//! wrapper: `rust_serve()`, `rust_protocol()` (which `tool()` reads) and
//! `rust_on_exit()`, a worker's `rust_json_take_zeroed()` (twice per call), and
//! those R code reaches during a tool call: `serve_tool()`'s (`rust_closure_scope()`,
//! `rust_tool_failed()`), `mcp_progress()`'s (`rust_progress()`) and
//! `tool_result()`'s (`rust_to_json()`, `rust_to_json_fixed()`,
//! `rust_check_tool_result()`, and `payload_options()`'s `rust_check()`); and
//! the package's routine registration.
//!
//! extendr's wrapper makes an `Robj` of every argument and of the value, and
//! each is an entry in extendr's process-wide ownership table, which keeps an
//! entry for every object it ever held in a hash table of 100,000 slots
//! (3.2 MB, see `ffi::Kept`). A result made per call is new objects at new
//! addresses each time, so a server whose tools return `tool_result()`s had
//! touched every page of that table within a few hundred calls
//! (bench/README.md, "Memory"). Here arguments are read in place (R keeps a
//! `.Call`'s arguments for its length) and values are made by `ffi::make`:
//! nothing enters the table. The other entry points run when tools are
//! defined, or for the developer tools, and keep extendr's wrapper.

use crate::ffi::{self, Kept, RFailure};
use crate::sexp::Sx;
use extendr_api::metadata::{Arg, Func, Metadata};
use extendr_api::{GetSexp, Robj, SEXP};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A `.Call` argument as an `&Robj`, outside extendr's table.
///
/// # Safety
/// `sexp` must be an argument of the running `.Call` (R keeps it alive until
/// the call returns), and the reference must not outlive the call.
unsafe fn arg(sexp: &SEXP) -> &Robj {
    // SAFETY: the caller's contract keeps the object alive; see `ffi::as_robj`.
    unsafe { ffi::as_robj(sexp) }
}

/// Hands R the value `body` made (`None`: `NULL`), as extendr's wrapper
/// would: a failure to make it (R could not allocate) or a panic becomes an
/// R error, raised here once everything the body owned is dropped.
fn run(name: &str, body: impl FnOnce() -> Result<Option<Kept>, RFailure>) -> SEXP {
    let message = match catch_unwind(AssertUnwindSafe(body)) {
        // SAFETY: R's NULL is a constant.
        Ok(Ok(None)) => return unsafe { extendr_ffi::R_NilValue },
        Ok(Ok(Some(kept))) => {
            // SAFETY: the object is live while `kept` is; releasing it does
            // not allocate, so it is still there when R receives it.
            let sexp = unsafe { kept.get() };
            drop(kept);
            return sexp;
        }
        Ok(Err(failure)) => failure.to_string(),
        Err(_) => format!("internal error: {name} panicked"),
    };
    // Rf_error copies the message before it jumps; nothing else is left to drop.
    extendr_api::throw_r_error(message.replace('\0', ""))
}

/// `list(value, error)`: `Ok` the value, `Err` the message for R to raise.
fn outcome(made: Result<Option<Kept>, String>) -> Result<Option<Kept>, RFailure> {
    let list = match made {
        Ok(value) => ffi::named_list(&[("value", value.as_ref()), ("error", None)]),
        Err(message) => ffi::named_list(&[("value", None), ("error", Some(&ffi::string(&message)?))]),
    };
    list.map(Some)
}

/// The tool's own function starts (`TRUE`) or ends (`FALSE`): see
/// `host::closure_scope`.
extern "C" fn rust_closure_scope(enter: SEXP) -> SEXP {
    run("rust_closure_scope", || {
        // SAFETY: the argument of this `.Call`, read within it.
        let enter = unsafe { arg(&enter) };
        let enter = mcplite_core::r::flag1(&Sx::borrowed(enter))
            .ok_or_else(|| RFailure::Error("`enter` must be TRUE or FALSE".into()))?;
        crate::host::closure_scope(enter);
        Ok(None)
    })
}

/// `serve_tool()` (R/invoke.R): the call running now failed with this
/// message; it ends next, through R's top-level restart (see `host::tool_failed`).
extern "C" fn rust_tool_failed(message: SEXP) -> SEXP {
    run("rust_tool_failed", || {
        // SAFETY: the argument of this `.Call`, read within it.
        crate::host::tool_failed(unsafe { arg(&message) });
        Ok(None)
    })
}

/// `mcp_progress()`: checks the arguments (`NULL`, or `list(arg, message)`
/// for R to raise) and hands the report to the call running now, if any.
extern "C" fn rust_progress(progress: SEXP, total: SEXP, message: SEXP) -> SEXP {
    run("rust_progress", || {
        // SAFETY: the arguments of this `.Call`, read within it.
        let (progress, total, message) = unsafe { (arg(&progress), arg(&total), arg(&message)) };
        let read =
            mcplite_core::progress::read_report(&Sx::borrowed(progress), &Sx::borrowed(total), &Sx::borrowed(message));
        match read {
            Ok(report) => {
                // The call running in this process, else one that came over a
                // link (a live session's, a worker's), else one on a script's
                // worker (the server's relay).
                if let Some(report) = crate::host::report_progress(report).and_then(crate::session::run::report) {
                    crate::relay::worker_report(report);
                }
                Ok(None)
            }
            Err((name, text)) => {
                let (name, text) = (ffi::string(name)?, ffi::string(&text)?);
                ffi::named_list(&[("arg", Some(&name)), ("message", Some(&text))]).map(Some)
            }
        }
    })
}

/// Payload JSON, byte-identical to `jsonlite::toJSON()` with the payload
/// options, as a JSON text (`build::json_text`).
extern "C" fn rust_to_json(x: SEXP, opts: SEXP, helpers: SEXP) -> SEXP {
    run("rust_to_json", || {
        // SAFETY: the arguments of this `.Call`, read within it.
        let (x, opts, helpers) = unsafe { (arg(&x), arg(&opts), arg(&helpers)) };
        outcome((|| {
            crate::sexp::set_helpers(helpers)?;
            let o = mcplite_core::r::options::read(&Sx::borrowed(opts)).map_err(|p| p.text())?;
            // Serialized into a reused buffer and copied once, into a JSON text.
            mcplite_core::rjson::with_json(&Sx::borrowed(x), &o, |bytes| crate::build::json_text(bytes, x))?.map(Some)
        })())
    })
}

/// Fixed protocol encoding of an R value (schemas, annotations, `_meta`);
/// errors name the element, starting from `arg`.
extern "C" fn rust_to_json_fixed(x: SEXP, arg_name: SEXP) -> SEXP {
    run("rust_to_json_fixed", || {
        // SAFETY: the arguments of this `.Call`, read within it.
        let (x, arg_name) = unsafe { (arg(&x), arg(&arg_name)) };
        outcome(crate::rstring::text(arg_name, "arg").and_then(|name| {
            let json = mcplite_core::r::fixed::encode(&Sx::borrowed(x), &name).map_err(|e| e.message(&name))?;
            ffi::string(&json.to_string()).map(Some).map_err(|f| f.to_string())
        }))
    })
}

/// An author's object checked by the core's rule `kind` (see
/// `core::r::author`): `list(error, warnings, names)`, each a problem as
/// `list(message, class, arg, at)` for R to raise (`author_check()`).
/// (`payload_options()` runs it for every structured result.)
extern "C" fn rust_check(kind: SEXP, x: SEXP, arg_name: SEXP) -> SEXP {
    fn problem(message: &str, class: &str, arg: &str, at: &[usize]) -> Result<Kept, RFailure> {
        let at: Vec<i32> = at.iter().map(|&i| i as i32).collect();
        let (message, class, arg, at) =
            (ffi::string(message)?, ffi::string(class)?, ffi::string(arg)?, ffi::integers(&at)?);
        ffi::named_list(&[("message", Some(&message)), ("class", Some(&class)), ("arg", Some(&arg)), ("at", Some(&at))])
    }
    let of = |p: &mcplite_core::r::Problem| problem(&p.for_r(), p.class, &p.arg, &p.at);
    run("rust_check", || {
        // SAFETY: the arguments of this `.Call`, read within it.
        let (kind, x, arg_name) = unsafe { (arg(&kind), arg(&x), arg(&arg_name)) };
        let checked = match (crate::rstring::text(kind, "kind"), crate::rstring::text(arg_name, "arg")) {
            (Ok(kind), Ok(name)) => {
                mcplite_core::r::author::check(&kind, &Sx::borrowed(x), &name).map_err(|e| (e, name))
            }
            (Err(e), _) | (_, Err(e)) => Err((e, "arg".to_string())),
        };
        let (error, warnings, names) = match checked {
            Ok(v) => {
                let warnings = v.warnings.iter().map(of).collect::<Result<Vec<_>, _>>()?;
                let error = v.problem.as_ref().map(of).transpose()?;
                // A dropped element has the name "" (R checked that none is empty).
                let names = match &v.names {
                    Some(n) => Some(ffi::strings(&n.iter().map(|x| x.as_deref().unwrap_or("")).collect::<Vec<_>>())?),
                    None => None,
                };
                (error, warnings, names)
            }
            Err((e, name)) => (Some(problem(&e, "argument", &name, &[])?), Vec::new(), None),
        };
        let warnings = ffi::list(&warnings)?;
        ffi::named_list(&[("error", error.as_ref()), ("warnings", Some(&warnings)), ("names", names.as_ref())])
            .map(Some)
    })
}

/// The server's own reading of a built `tool_result()`
/// (`core::r::result::check_built`): `list(value = NULL, error)`.
extern "C" fn rust_check_tool_result(x: SEXP) -> SEXP {
    run("rust_check_tool_result", || {
        // SAFETY: the argument of this `.Call`, read within it.
        let x = unsafe { arg(&x) };
        outcome(mcplite_core::r::result::check_built(&Sx::borrowed(x)).map(|()| None))
    })
}

/// The process is ending (an exit finalizer): answer a call in flight.
extern "C" fn rust_on_exit() -> SEXP {
    run("rust_on_exit", || {
        crate::host::on_r_exit();
        Ok(None)
    })
}

/// Whether this process serialized a finite non-zero number as 0 since it
/// last asked (`rjson::take_zeroed`): a worker asks before and after every
/// call (R/workers.R) and hands it to the server with the call's outcome.
extern "C" fn rust_json_take_zeroed() -> SEXP {
    run("rust_json_take_zeroed", || ffi::flag(mcplite_core::rjson::take_zeroed()).map(Some))
}

/// Serve MCP on stdin/stdout until end of input. `settings` is the list
/// `serve_specs()` makes (see `serve::Settings`); `list(value = how it
/// ended, error)`.
extern "C" fn rust_serve(settings: SEXP) -> SEXP {
    run("rust_serve", || {
        // SAFETY: the argument of this `.Call`, read within it.
        let settings = unsafe { arg(&settings) };
        let served = crate::serve::Settings::read(settings).and_then(crate::serve::run);
        outcome(served.and_then(|how| ffi::string(how).map(Some).map_err(|e| e.to_string())))
    })
}

/// The protocol facts R reads instead of spelling them (see ARCHITECTURE.md,
/// "R <-> Rust contract"): `list(versions, latest_legacy, names)`.
extern "C" fn rust_protocol() -> SEXP {
    use mcplite_core::version::{Version, LATEST_LEGACY, VERSIONS};
    use mcplite_core::wire::NAMES;
    run("rust_protocol", || {
        let column = |f: fn(&Version) -> &'static str| ffi::strings(&VERSIONS.iter().map(f).collect::<Vec<_>>());
        let flag = |f: fn(&Version) -> bool| ffi::logicals(&VERSIONS.iter().map(f).collect::<Vec<_>>());
        let versions = [
            ("id", column(|v| v.id)?),
            ("era", column(|v| v.era.label())?),
            ("tool_title_annotations_meta", flag(|v| v.tool_title_annotations_meta)?),
            ("output_schema", column(|v| v.output_schema.label())?),
            ("structured_content", column(|v| v.structured_content.label())?),
            ("audio_and_links", flag(|v| v.audio_and_links)?),
            ("last_modified", flag(|v| v.last_modified)?),
            ("content_meta", flag(|v| v.content_meta)?),
            ("strict_schema_members", flag(|v| v.strict_schema_members)?),
            ("modern_result", flag(|v| v.modern_result)?),
            ("initialize_instructions", flag(|v| v.initialize_instructions)?),
        ];
        let versions = ffi::named_list(&versions.iter().map(|(n, v)| (*n, Some(v))).collect::<Vec<_>>())?;
        let names = ffi::strings(&NAMES.iter().map(|(_, name)| *name).collect::<Vec<_>>())?;
        ffi::set_names(&names, &ffi::strings(&NAMES.iter().map(|(id, _)| *id).collect::<Vec<_>>())?)?;
        let latest = ffi::string(VERSIONS[LATEST_LEGACY].id)?;
        ffi::named_list(&[("versions", Some(&versions)), ("latest_legacy", Some(&latest)), ("names", Some(&names))])
            .map(Some)
    })
}

/// The routines of this module for R's registration: R name, argument names,
/// and the function (cast to the untyped pointer R's table holds).
fn routines() -> Vec<(&'static str, &'static [&'static str], *const u8)> {
    type F3 = extern "C" fn(SEXP, SEXP, SEXP) -> SEXP;
    type F2 = extern "C" fn(SEXP, SEXP) -> SEXP;
    type F1 = extern "C" fn(SEXP) -> SEXP;
    type F0 = extern "C" fn() -> SEXP;
    vec![
        ("rust_serve", &["settings"], rust_serve as F1 as *const u8),
        ("rust_protocol", &[], rust_protocol as F0 as *const u8),
        ("rust_on_exit", &[], rust_on_exit as F0 as *const u8),
        ("rust_json_take_zeroed", &[], rust_json_take_zeroed as F0 as *const u8),
        ("rust_closure_scope", &["enter"], rust_closure_scope as F1 as *const u8),
        ("rust_tool_failed", &["message"], rust_tool_failed as F1 as *const u8),
        ("rust_progress", &["progress", "total", "message"], rust_progress as F3 as *const u8),
        ("rust_check", &["kind", "x", "arg"], rust_check as F3 as *const u8),
        ("rust_to_json", &["x", "opts", "helpers"], rust_to_json as F3 as *const u8),
        ("rust_to_json_fixed", &["x", "arg"], rust_to_json_fixed as F2 as *const u8),
        ("rust_check_tool_result", &["x"], rust_check_tool_result as F1 as *const u8),
    ]
}

/// extendr's metadata with this module's routines added, under the
/// `wrap__` names R/extendr-wrappers.R calls (the same as extendr's).
fn with_routines(mut metadata: Metadata) -> Metadata {
    for (name, args, ptr) in routines() {
        metadata.functions.push(Func {
            doc: "",
            rust_name: name,
            mod_name: name,
            r_name: name,
            c_name: c_name(name),
            args: args.iter().map(|&a| Arg { name: a, arg_type: "Robj", default: None }).collect(),
            return_type: "Robj",
            func_ptr: ptr,
            hidden: false,
            invisible: None,
        });
    }
    metadata
}

/// `wrap__<name>`, leaked once per routine at registration (R copies the
/// names, but extendr's `Func` holds `&'static str`).
fn c_name(name: &str) -> &'static str {
    Box::leak(format!("wrap__{name}").into_boxed_str())
}

/// Registers every `.Call` routine of the package, extendr's and this
/// module's, in one table (R keeps only the last table it is given). Called
/// by `R_init_mcplite` (src/entrypoint.c).
#[no_mangle]
pub extern "C" fn mcplite_register_routines(dll: *mut extendr_api::DllInfo) {
    let metadata = with_routines(crate::get_mcplite_metadata());
    // SAFETY: `dll` is the DllInfo R passed to R_init_mcplite, and every
    // function pointer in the table takes as many SEXPs as its `args` say.
    unsafe { extendr_api::register_call_methods(dll, metadata) }
}
