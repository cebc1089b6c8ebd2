//! The script R runs, found again after the working directory changed.
//!
//! `Rscript server.R` hands R a path relative to the folder it started in.
//! A script may call `setwd()` before mcplite is loaded, and from there the
//! same relative path names another file (or none). R keeps the script open
//! while it reads it, so the operating system can name it
//! ([`crate::platform::open_files`]); this picks it among the open files.

use crate::platform;
use extendr_api::prelude::*;
use std::path::{Component, Path, PathBuf};

/// Where the script is, and the folder its relative path starts from (the
/// folder R started in, as far as the script's path tells).
struct Found {
    script: PathBuf,
    start: PathBuf,
}

/// The open file that R's relative script path `given` names, with the
/// folder it is relative to; why not when no open file can be told to be it.
fn find(given: &Path, cwd: Option<&Path>) -> Result<Found, String> {
    let shown = given.display();
    // Without "." components, so the path's tail can be compared.
    let tail: PathBuf = given.components().filter(|c| !matches!(c, Component::CurDir)).collect();
    let Some(name) = tail.file_name() else {
        return Err(format!("the script path {shown} does not name a file"));
    };
    let open: Vec<PathBuf> = platform::open_files().into_iter().filter(|p| p.file_name() == Some(name)).collect();
    // The working directory has not changed (or leads to the same file).
    if let Some(cwd) = cwd {
        let here = cwd.join(given);
        if let Some(script) = open.iter().find(|p| platform::same_file(p, &here)) {
            return Ok(Found { script: script.clone(), start: cwd.to_path_buf() });
        }
    }
    let plain = tail.components().all(|c| matches!(c, Component::Normal(_)));
    let ends: Vec<&PathBuf> = open.iter().filter(|p| plain && p.ends_with(&tail)).collect();
    let moved = "the working directory changed before mcplite was loaded (a setwd() ahead of library(mcplite))";
    match ends.as_slice() {
        [script] => {
            let mut start = script.to_path_buf();
            for _ in tail.components() {
                start.pop();
            }
            Ok(Found { script: script.to_path_buf(), start })
        }
        [] if open.is_empty() => Err(format!(
            "{moved}, and the operating system does not name an open file {}, so the script R runs ({shown}, relative to the folder R started in) cannot be found again",
            name.to_string_lossy()
        )),
        [] => Err(format!(
            "{moved}, and no open file ends with {shown}, so the script R runs cannot be told from {} other file(s) named {}",
            open.len(),
            name.to_string_lossy()
        )),
        _ => Err(format!(
            "{moved}, and {} open files end with {shown}, so the script R runs cannot be told apart",
            ends.len()
        )),
    }
}

/// The script R runs from its `--file=` path relative to the folder R
/// started in: `list(value = list(script, start), error)`.
/// @noRd
#[extendr]
fn rust_running_script(file: Robj) -> Robj {
    let found = crate::rstring::path(&file, "file").and_then(|given| {
        let cwd = std::env::current_dir().ok();
        find(&given, cwd.as_deref())
    });
    match found {
        Ok(f) => {
            let (script, start) = (path_r(&f.script), path_r(&f.start));
            match (script, start) {
                (Ok(script), Ok(start)) => list!(value = list!(script = script, start = start), error = ()).into(),
                (Err(e), _) | (_, Err(e)) => list!(value = (), error = e).into(),
            }
        }
        Err(e) => list!(value = (), error = e).into(),
    }
}

/// A path from the operating system as an R string.
fn path_r(p: &Path) -> std::result::Result<Robj, String> {
    crate::rstring::from_os(p.as_os_str())
}

extendr_module! {
    mod script;
    fn rust_running_script;
}
