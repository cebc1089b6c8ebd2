//! MCP's field names: each spelled once, here.
//!
//! The rest of both crates reads a name from this module, as a `&str`
//! ([`PROTOCOL_VERSION`]) or, where JSON is written as bytes for speed, as the
//! ready-made member prefix (`first::RESULT_TYPE` is `"resultType":`,
//! `after::MIME_TYPE` is `,"mimeType":`), so the writers that build JSON as
//! bytes stay one copy per name.
//!
//! Which names live here: every property name of the official schemas
//! (`tests/schema`) that has an uppercase letter, a leading underscore, a dot
//! or a slash. Those are MCP's own spellings and nothing else uses them.
//! All-lowercase names (`name`, `type`, `text`, `content`, ...) stay literal:
//! they are also R's list names and JSON Schema's keywords, read and written
//! in those roles all through the code. `tools/wire-names.mjs` (run by
//! `tools/lint.sh`) fails if a name of the first kind appears as a string in
//! non-test Rust code outside this file, or in the package's R code (which
//! reads the names it needs through [`NAMES`]: `wire_name()` in R).

macro_rules! wire_names {
    ($($(#[$doc:meta])* $id:ident = $name:literal;)*) => {
        $($(#[$doc])* pub const $id: &str = $name;)*

        /// Each name as the first member of an object: `"name":`.
        pub mod first {
            $(pub const $id: &str = concat!("\"", $name, "\":");)*
        }

        /// Each name as a later member of an object: `,"name":`.
        pub mod after {
            $(pub const $id: &str = concat!(",\"", $name, "\":");)*
        }

        /// Every name with its constant's identifier, for the glue to hand
        /// R (whose code reads a name from here instead of spelling it).
        pub const NAMES: &[(&str, &str)] = &[$((stringify!($id), $name)),*];
    };
}

wire_names! {
    // Lifecycle and discovery.
    PROTOCOL_VERSION = "protocolVersion";
    CLIENT_INFO = "clientInfo";
    SERVER_INFO = "serverInfo";
    SUPPORTED_VERSIONS = "supportedVersions";
    LIST_CHANGED = "listChanged";
    WEBSITE_URL = "websiteUrl";
    CREATE_MESSAGE = "createMessage";
    // Results of the 2026-07-28 era.
    RESULT_TYPE = "resultType";
    TTL_MS = "ttlMs";
    CACHE_SCOPE = "cacheScope";
    NEXT_CURSOR = "nextCursor";
    // Request metadata and notifications.
    META = "_meta";
    PROGRESS_TOKEN = "progressToken";
    REQUEST_ID = "requestId";
    META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion";
    META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities";
    META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo";
    META_LOG_LEVEL = "io.modelcontextprotocol/logLevel";
    META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
    // Tools.
    INPUT_SCHEMA = "inputSchema";
    OUTPUT_SCHEMA = "outputSchema";
    READ_ONLY_HINT = "readOnlyHint";
    DESTRUCTIVE_HINT = "destructiveHint";
    IDEMPOTENT_HINT = "idempotentHint";
    OPEN_WORLD_HINT = "openWorldHint";
    // Tool results and content.
    STRUCTURED_CONTENT = "structuredContent";
    IS_ERROR = "isError";
    MIME_TYPE = "mimeType";
    LAST_MODIFIED = "lastModified";
    // JSON Schema keywords the official schemas also use as property names.
    ANY_OF = "anyOf";
    ONE_OF = "oneOf";
    ALL_OF = "allOf";
    ADDITIONAL_PROPERTIES = "additionalProperties";
    MIN_LENGTH = "minLength";
    MAX_LENGTH = "maxLength";
    MIN_ITEMS = "minItems";
    MAX_ITEMS = "maxItems";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_spelled_once_and_its_prefixes_match_it() {
        let mut seen = std::collections::HashSet::new();
        for (_, name) in NAMES {
            assert!(seen.insert(*name), "{name} is listed twice");
        }
        assert_eq!(first::RESULT_TYPE, "\"resultType\":");
        assert_eq!(after::MIME_TYPE, ",\"mimeType\":");
        assert_eq!(after::META, ",\"_meta\":");
    }
}
