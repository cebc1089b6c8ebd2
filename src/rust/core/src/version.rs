//! The version table: every protocol revision mcplite serves and what each one
//! can carry. Projection and dispatch read these flags; nothing else hard-codes
//! a version string.

use crate::requests::{self, Shape};

/// How a version is selected on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// Chosen once by `initialize` for the stdio process.
    Legacy,
    /// Chosen per request in `params._meta`.
    Modern,
}

/// Which `outputSchema` / `structuredContent` shapes a version accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Structured {
    None,
    ObjectOnly,
    Any,
}

#[derive(Debug)]
pub struct Version {
    pub id: &'static str,
    pub era: Era,
    /// `title`, `annotations` and `_meta` on a Tool.
    pub tool_title_annotations_meta: bool,
    /// What `initialize` params (legacy) or `_meta` (modern) must hold.
    pub client_info: &'static Shape,
    pub client_capabilities: &'static Shape,
    pub output_schema: Structured,
    pub structured_content: Structured,
    /// Audio and resource-link content blocks.
    pub audio_and_links: bool,
    /// `annotations.lastModified` on content.
    pub last_modified: bool,
    /// `_meta` on content blocks and resource contents.
    pub content_meta: bool,
    /// Tool `properties` members must be objects and `required` an array.
    pub strict_schema_members: bool,
    /// `resultType`, serverInfo in `_meta`, cache hints.
    pub modern_result: bool,
    /// `instructions` in the `initialize` result. 2024-11-05's schema allows
    /// it too; mcplite leaves it out there, as CRAN mcplite does.
    pub initialize_instructions: bool,
    /// `message` in `notifications/progress` (not in 2024-11-05).
    pub progress_message: bool,
}

/// Supported versions in preference order (what discovery advertises).
pub const VERSIONS: [Version; 4] = [
    Version {
        id: "2026-07-28",
        era: Era::Modern,
        tool_title_annotations_meta: true,
        client_info: &requests::IMPLEMENTATION_2025_11,
        client_capabilities: &requests::CAPABILITIES_2026,
        output_schema: Structured::Any,
        structured_content: Structured::Any,
        audio_and_links: true,
        last_modified: true,
        content_meta: true,
        strict_schema_members: false,
        modern_result: true,
        initialize_instructions: true,
        progress_message: true,
    },
    Version {
        id: "2025-11-25",
        era: Era::Legacy,
        tool_title_annotations_meta: true,
        client_info: &requests::IMPLEMENTATION_2025_11,
        client_capabilities: &requests::CAPABILITIES_2025_11,
        output_schema: Structured::ObjectOnly,
        structured_content: Structured::ObjectOnly,
        audio_and_links: true,
        last_modified: true,
        content_meta: true,
        strict_schema_members: true,
        modern_result: false,
        initialize_instructions: true,
        progress_message: true,
    },
    Version {
        id: "2025-06-18",
        era: Era::Legacy,
        tool_title_annotations_meta: true,
        client_info: &requests::IMPLEMENTATION_2025_06,
        client_capabilities: &requests::CAPABILITIES_2025_06,
        output_schema: Structured::ObjectOnly,
        structured_content: Structured::ObjectOnly,
        audio_and_links: true,
        last_modified: true,
        content_meta: true,
        strict_schema_members: true,
        modern_result: false,
        initialize_instructions: true,
        progress_message: true,
    },
    Version {
        id: "2024-11-05",
        era: Era::Legacy,
        tool_title_annotations_meta: false,
        client_info: &requests::IMPLEMENTATION_2024,
        client_capabilities: &requests::CAPABILITIES_2024,
        output_schema: Structured::None,
        structured_content: Structured::None,
        audio_and_links: false,
        last_modified: false,
        content_meta: false,
        strict_schema_members: true,
        modern_result: false,
        initialize_instructions: false,
        progress_message: false,
    },
];

/// Index into [`VERSIONS`]; cheap to copy and compare.
pub type VersionIndex = usize;

/// What a legacy `initialize` answers when the requested version is not
/// served: the first legacy row of [`VERSIONS`], found rather than written,
/// so that adding a version stays one row.
pub const LATEST_LEGACY: VersionIndex = first_of_era(Era::Legacy);

const fn first_of_era(era: Era) -> VersionIndex {
    let mut i = 0;
    while i < VERSIONS.len() {
        if VERSIONS[i].era as u8 == era as u8 {
            return i;
        }
        i += 1;
    }
    // Evaluated at compile time: a table without that era does not build.
    panic!("VERSIONS has no row of the era asked for")
}

/// Cache hint on modern discovery and listing results, in milliseconds.
pub const CACHE_TTL_MS: u64 = 300_000;

pub fn lookup(id: &str) -> Option<VersionIndex> {
    VERSIONS.iter().position(|v| v.id == id)
}

/// Legacy negotiation: the requested version when it is a served legacy
/// version, else the latest legacy one (never the modern version).
pub fn negotiate_legacy(requested: &str) -> VersionIndex {
    match lookup(requested) {
        Some(i) if VERSIONS[i].era == Era::Legacy => i,
        _ => LATEST_LEGACY,
    }
}

/// What mcplite declares it can do: tools, and it never announces changes to
/// the list (it sends no notifications).
pub fn server_capabilities() -> serde_json::Value {
    server_capabilities_for(false)
}

/// The capabilities of a server whose tools may change while it serves (the
/// live-session server, see `Server::set_live_tools`): it promises
/// `notifications/tools/list_changed`.
pub fn server_capabilities_for(live_tools: bool) -> serde_json::Value {
    serde_json::json!({"tools": {(crate::wire::LIST_CHANGED): live_tools}})
}

/// `ttlMs` of a live-session server's modern `tools/list`: stale at once.
pub const LIVE_CACHE_TTL_MS: u64 = 0;

pub fn supported_ids() -> Vec<&'static str> {
    VERSIONS.iter().map(|v| v.id).collect()
}

impl Era {
    /// The era's name where it is shown to people (R's version table).
    pub fn label(self) -> &'static str {
        match self {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

impl Structured {
    /// The shapes' name where they are shown to people (R's version table).
    pub fn label(self) -> &'static str {
        match self {
            Structured::None => "none",
            Structured::ObjectOnly => "object",
            Structured::Any => "any",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preference_order_is_modern_first() {
        assert_eq!(supported_ids(), ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"]);
    }

    #[test]
    fn legacy_negotiation_never_picks_modern() {
        assert_eq!(VERSIONS[negotiate_legacy("2024-11-05")].id, "2024-11-05");
        assert_eq!(VERSIONS[negotiate_legacy("2025-06-18")].id, "2025-06-18");
        assert_eq!(VERSIONS[negotiate_legacy("2025-11-25")].id, "2025-11-25");
        assert_eq!(VERSIONS[negotiate_legacy("2026-07-28")].id, "2025-11-25");
        assert_eq!(VERSIONS[negotiate_legacy("2025-03-26")].id, "2025-11-25");
        assert_eq!(VERSIONS[negotiate_legacy("bogus")].id, "2025-11-25");
    }

    #[test]
    fn the_latest_legacy_version_is_the_first_legacy_row() {
        assert_eq!(VERSIONS[LATEST_LEGACY].id, "2025-11-25");
        assert!(VERSIONS[..LATEST_LEGACY].iter().all(|v| v.era == Era::Modern));
    }
}
