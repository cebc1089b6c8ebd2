//! R entry points of `mcp_config()`: client configuration snippets and files.
//! The logic lives in `mcplite_devtools::config_file`; this file converts the
//! entry from R and the outcome to R.
//!
//! Every entry point returns `list(value, error)`; an error is
//! `list(kind, message)` with kind `invalid`, `jsonc`, `layout`, `io`,
//! `links`, `changed`, `owner` or `path` (R raises `mcplite_error_config_<kind>`, or an argument error for
//! `path`).

use extendr_api::prelude::*;
use mcplite_devtools::config_file::{self, ConfigError, ErrorKind, Format, Update};
use serde_json::{Map, Value};

fn ok(value: Robj) -> Robj {
    list!(value = value, error = ()).into()
}

fn fail(e: &ConfigError) -> Robj {
    list!(value = (), error = list!(kind = e.kind.as_str(), message = e.message.as_str())).into()
}

fn fail_invalid(message: String) -> Robj {
    fail(&ConfigError { kind: ErrorKind::Invalid, message })
}

/// The entry (a named list) as a JSON object, in the fixed encoding.
fn entry_object(entry: &Robj) -> std::result::Result<Map<String, Value>, String> {
    match mcplite_core::r::fixed::encode(&crate::sexp::Sx::borrowed(entry), "entry") {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err("the entry must be a named list".into()),
        Err(e) => Err(e.message("entry")),
    }
}

/// The strings of an update, as protocol text (UTF-8, `crate::rstring`).
fn with_update(format: &Robj, key: &Robj, name: &Robj, entry: &Robj, f: impl FnOnce(&Update<'_>) -> Robj) -> Robj {
    let texts = (|| {
        Ok::<_, String>((
            crate::rstring::text(format, "format")?,
            crate::rstring::text(key, "key")?,
            crate::rstring::text(name, "name")?,
        ))
    })();
    let (format, key, name) = match texts {
        Ok(t) => t,
        Err(e) => return fail_invalid(e),
    };
    let Some(format) = Format::parse(&format) else {
        return fail_invalid(format!("unknown configuration format {format:?}"));
    };
    let entry = match entry_object(entry) {
        Ok(m) => m,
        Err(e) => return fail_invalid(e),
    };
    f(&Update { format, servers_key: &key, name: &name, entry: &entry })
}

/// The configuration text `text` (`""` for a new file) with the server entry
/// merged in; `file` names it in messages.
/// @noRd
#[extendr]
fn rust_config_merge(text: Robj, format: Robj, key: Robj, name: Robj, entry: Robj, file: Robj) -> Robj {
    let (text, file) = match (crate::rstring::text(&text, "text"), crate::rstring::text(&file, "file")) {
        (Ok(t), Ok(f)) => (t, f),
        (Err(e), _) | (_, Err(e)) => return fail_invalid(e),
    };
    with_update(&format, &key, &name, &entry, |u| match config_file::merge(&text, u, &file) {
        Ok(m) => ok(m.text.into()),
        Err(e) => fail(&e),
    })
}

/// Merge the server entry into the file at `path`, replacing it safely and
/// keeping the previous file as `<path>.bak` (see `config_file::write_entry`):
/// `list(path, backup, replaced)`.
/// @noRd
#[extendr]
fn rust_config_write(path: Robj, format: Robj, key: Robj, name: Robj, entry: Robj) -> Robj {
    // The path reaches the file system as R's file functions pass it.
    let path = match crate::rstring::path(&path, "path") {
        Ok(p) => p,
        Err(e) => return fail(&ConfigError { kind: ErrorKind::Path, message: e }),
    };
    with_update(&format, &key, &name, &entry, |u| match config_file::write_entry(&path, u) {
        Ok(w) => {
            // Paths go back to R as the file system gave them (native).
            let back = (|| {
                let backup: Robj = match &w.backup {
                    Some(b) => crate::rstring::from_os(b.as_os_str())?,
                    None => ().into(),
                };
                Ok::<_, String>((crate::rstring::from_os(w.path.as_os_str())?, backup))
            })();
            match back {
                Ok((path, backup)) => ok(list!(path = path, backup = backup, replaced = w.replaced).into()),
                Err(e) => fail(&ConfigError { kind: ErrorKind::Path, message: e }),
            }
        }
        Err(e) => fail(&e),
    })
}

/// The default configuration file of a client on this system, from the
/// environment (HOME, USERPROFILE, APPDATA, XDG_CONFIG_HOME, CODEX_HOME,
/// GEMINI_CLI_HOME).
/// @noRd
#[extendr]
fn rust_config_default_path(client: Robj) -> Robj {
    let client = match crate::rstring::text(&client, "client") {
        Ok(c) => c,
        Err(e) => return fail_invalid(e),
    };
    let env = |k: &str| std::env::var(k).ok();
    match config_file::default_path(&client, config_file::Os::current(), &env) {
        Ok(p) => ok(p.into()),
        Err(e) => fail(&e),
    }
}

/// The clients `mcp_config()` knows (`config_file::CLIENTS`), by id, each
/// `list(format, key)` (`NULL`s for a client that keeps its servers in files
/// of its own), as `list(value, error)`.
/// @noRd
#[extendr]
fn rust_config_clients() -> Robj {
    let specs: Vec<Robj> = config_file::CLIENTS
        .iter()
        .map(|c| {
            // NULL, not NA, for what a client does not have.
            let or_null = |s: Option<&str>| s.map_or_else(|| Robj::from(()), Robj::from);
            let format = c.format.map(|f| match f {
                Format::Json => "json",
                Format::Toml => "toml",
            });
            list!(format = or_null(format), key = or_null(c.servers_key)).into()
        })
        .collect();
    let ids = config_file::CLIENTS.iter().map(|c| c.id);
    match List::from_names_and_values(ids, specs) {
        Ok(named) => ok(named.into()),
        Err(e) => fail_invalid(e.to_string()),
    }
}

/// A path given with `~` (`config_file::expand_home`); `NULL` when the home
/// variable is unset.
/// @noRd
#[extendr]
fn rust_config_expand_home(path: Robj) -> Robj {
    let Ok(path) = crate::rstring::text(&path, "path") else { return ().into() };
    let env = |k: &str| std::env::var(k).ok();
    match config_file::expand_home(&path, config_file::Os::current(), &env) {
        Some(p) => p.into(),
        None => ().into(),
    }
}

extendr_module! {
    mod config_file;
    fn rust_config_merge;
    fn rust_config_write;
    fn rust_config_default_path;
    fn rust_config_clients;
    fn rust_config_expand_home;
}
