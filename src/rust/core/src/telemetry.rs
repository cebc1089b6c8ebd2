//! OpenTelemetry tracing: one SERVER span per valid message, configured only
//! from the standard environment variables, read once when the server starts.
//!
//! Nothing here writes to stdout: the stderr and file exporters write OTLP
//! JSON lines, and OTLP/HTTP goes through a blocking client with bounded
//! timeouts on the SDK's batch thread, never on the request path.

use crate::dispatch::Facts;
use crate::envelope::Message;
use crate::version::VERSIONS;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer, TracerProvider};
use opentelemetry::{Context, ContextGuard, KeyValue};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider, SpanData, SpanExporter};
use opentelemetry_sdk::Resource;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where spans go, decided from the environment.
#[derive(Debug, Clone, PartialEq)]
pub enum ExporterChoice {
    None,
    Stderr,
    Otlp,
    File(String),
    /// A value that would corrupt the protocol or is unknown: warn, trace nothing.
    Refused(String),
}

/// Read the exporter configuration. `env` looks up one variable.
pub fn exporter_choice(env: &dyn Fn(&str) -> Option<String>) -> ExporterChoice {
    let set = |k: &str| env(k).filter(|v| !v.trim().is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true")) {
        return ExporterChoice::None;
    }
    let (var, value) = match set("OTEL_R_TRACES_EXPORTER") {
        Some(v) => ("OTEL_R_TRACES_EXPORTER", v),
        None => match set("OTEL_TRACES_EXPORTER") {
            Some(v) => ("OTEL_TRACES_EXPORTER", v),
            None => return ExporterChoice::None,
        },
    };
    match value.trim() {
        "none" => ExporterChoice::None,
        "stderr" => ExporterChoice::Stderr,
        "otlp" | "http" => ExporterChoice::Otlp,
        "otlp/file" => {
            let pattern = set("OTEL_EXPORTER_OTLP_TRACES_FILE")
                .or_else(|| set("OTEL_EXPORTER_OTLP_FILE"))
                .unwrap_or_else(|| "trace-%N.jsonl".into());
            ExporterChoice::File(pattern.replace("%N", "0").replace("%n", "1"))
        }
        "stdout" | "console" => ExporterChoice::Refused(format!(
            "mcplite: {var}={value} would write telemetry into the MCP protocol stream on stdout; \
             tracing is off. Use stderr, otlp or otlp/file."
        )),
        other => ExporterChoice::Refused(format!(
            "mcplite: {var}={other} is not an exporter mcplite knows (none, stderr, otlp, http, otlp/file); tracing is off."
        )),
    }
}

/// Exports spans as OTLP JSON, one `ExportTraceServiceRequest` per line.
pub struct JsonLinesExporter {
    sink: Arc<Mutex<dyn Write + Send>>,
    resource: Resource,
}

impl std::fmt::Debug for JsonLinesExporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JsonLinesExporter")
    }
}

impl JsonLinesExporter {
    pub fn new(sink: Arc<Mutex<dyn Write + Send>>) -> Self {
        JsonLinesExporter { sink, resource: Resource::builder_empty().build() }
    }
}

impl SpanExporter for JsonLinesExporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
        use opentelemetry_proto::transform::common::tonic::ResourceAttributesWithSchema;
        use opentelemetry_proto::transform::trace::tonic::group_spans_by_resource_and_scope;
        let resource = ResourceAttributesWithSchema::from(&self.resource);
        let request = ExportTraceServiceRequest { resource_spans: group_spans_by_resource_and_scope(batch, &resource) };
        let mut line = serde_json::to_vec(&request).map_err(|e| OTelSdkError::InternalFailure(e.to_string()))?;
        line.push(b'\n');
        let mut sink = self.sink.lock().map_err(|_| OTelSdkError::InternalFailure("poisoned sink".into()))?;
        sink.write_all(&line).and_then(|_| sink.flush()).map_err(|e| OTelSdkError::InternalFailure(e.to_string()))
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.resource = resource.clone();
    }
}

/// A blocking HTTP client for the OTLP exporter (no async runtime needed).
#[derive(Debug)]
struct UreqClient {
    agent: ureq::Agent,
}

impl UreqClient {
    fn new(timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder().timeout_global(Some(timeout)).http_status_as_error(false).build();
        UreqClient { agent: config.into() }
    }
}

#[async_trait::async_trait]
impl opentelemetry_http::HttpClient for UreqClient {
    async fn send_bytes(
        &self,
        request: http::Request<bytes::Bytes>,
    ) -> Result<http::Response<bytes::Bytes>, opentelemetry_http::HttpError> {
        let (parts, body) = request.into_parts();
        let request = http::Request::from_parts(parts, body.to_vec());
        let response = self.agent.run(request)?;
        let (parts, mut body) = response.into_parts();
        let bytes = body.read_to_vec()?;
        Ok(http::Response::from_parts(parts, bytes::Bytes::from(bytes)))
    }
}

fn otlp_timeout(env: &dyn Fn(&str) -> Option<String>) -> Duration {
    let ms = env("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(10_000);
    Duration::from_millis(ms.clamp(1, 60_000))
}

fn resource(env: &dyn Fn(&str) -> Option<String>) -> Resource {
    let builder = Resource::builder();
    let named = env("OTEL_SERVICE_NAME").is_some()
        || env("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
    if named {
        builder.build()
    } else {
        builder.with_service_name("mcplite").build()
    }
}

/// Opens the `otlp/file` exporter's file for appending.
pub type OpenTraceFile = dyn Fn(&str) -> std::io::Result<std::fs::File>;

fn open_append(path: &str) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new().create(true).append(true).open(path)
}

/// Build the tracer provider the environment asks for, or explain on stderr
/// why there is none.
fn provider_from(env: &dyn Fn(&str) -> Option<String>, open: &OpenTraceFile) -> Option<SdkTracerProvider> {
    let builder = SdkTracerProvider::builder().with_resource(resource(env));
    let provider = match exporter_choice(env) {
        ExporterChoice::None => return None,
        ExporterChoice::Refused(warning) => {
            diag(&warning);
            return None;
        }
        ExporterChoice::Stderr => {
            let sink: Arc<Mutex<dyn Write + Send>> = Arc::new(Mutex::new(std::io::stderr()));
            builder.with_simple_exporter(JsonLinesExporter::new(sink)).build()
        }
        ExporterChoice::File(path) => match open(&path) {
            Ok(file) => {
                let sink: Arc<Mutex<dyn Write + Send>> = Arc::new(Mutex::new(file));
                builder.with_simple_exporter(JsonLinesExporter::new(sink)).build()
            }
            Err(e) => {
                diag(&format!("mcplite: cannot open the OTLP trace file {path}: {e}; tracing is off."));
                return None;
            }
        },
        ExporterChoice::Otlp => {
            use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
            let mut exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(UreqClient::new(otlp_timeout(env)));
            // The OTLP crate reads endpoint, headers, timeout and compression
            // itself; the protocol is protobuf unless the environment asks for
            // JSON (the crate's own default is JSON when both are built in).
            let wants_json = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
                .is_some_and(|p| p.trim() == "http/json");
            exporter = exporter.with_protocol(if wants_json {
                opentelemetry_otlp::Protocol::HttpJson
            } else {
                opentelemetry_otlp::Protocol::HttpBinary
            });
            match exporter.build() {
                Ok(exporter) => builder.with_batch_exporter(Reporting::new(exporter)).build(),
                Err(e) => {
                    diag(&format!("mcplite: the OTLP exporter could not be configured: {e}; tracing is off."));
                    return None;
                }
            }
        }
    };
    Some(provider)
}

struct Active {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

/// The span of one message, open from `begin` to `end`.
pub struct Span(Option<Context>);

/// The server's tracing; a true no-op when no exporter is configured.
pub struct Telemetry {
    active: Option<Active>,
}

/// Lets a diagnostic line go to stderr without ever failing or panicking
/// (`eprintln!` panics when stderr is closed).
pub fn diag(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(line.as_bytes()).and_then(|_| err.write_all(b"\n")).and_then(|_| err.flush());
}

/// Wraps an exporter to say once on stderr that exporting failed, instead of
/// losing spans silently.
#[derive(Debug)]
pub struct Reporting<E> {
    inner: E,
}

/// Export failures are said once per process, whichever way they show.
// Global because the SDK owns the exporter (on its batch thread), and a
// process may set up tracing more than once: said once per process.
static EXPORT_FAILURE_SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn say_export_failure(message: &str) {
    if !EXPORT_FAILURE_SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        diag(message);
    }
}

impl<E> Reporting<E> {
    pub fn new(inner: E) -> Self {
        Reporting { inner }
    }
    fn report(&self, e: &OTelSdkError) {
        say_export_failure(&format!("mcplite: exporting trace spans failed ({e}); later failures are not reported."));
    }
}

impl<E: SpanExporter> SpanExporter for Reporting<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let r = self.inner.export(batch).await;
        if let Err(e) = &r {
            self.report(e);
        }
        r
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }
    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }
    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource)
    }
}

/// How long exporting may hold up the end of serving: clients give a server
/// a short grace period after closing its stdin before they kill it.
pub const SHUTDOWN_BUDGET: Duration = Duration::from_millis(1500);

impl Telemetry {
    /// Configure from the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(&|k| std::env::var(k).ok())
    }

    /// Configure from the process environment, opening a trace file with
    /// `open` (the server's never waits for a reader, see the glue's
    /// platform module).
    pub fn from_env_opening(open: &OpenTraceFile) -> Self {
        Self::from_provider(provider_from(&|k| std::env::var(k).ok(), open))
    }

    pub fn from_lookup(env: &dyn Fn(&str) -> Option<String>) -> Self {
        Self::from_provider(provider_from(env, &open_append))
    }

    pub fn from_provider(provider: Option<SdkTracerProvider>) -> Self {
        Telemetry {
            active: provider.map(|provider| {
                let scope = opentelemetry::InstrumentationScope::builder("mcplite")
                    .with_version(env!("CARGO_PKG_VERSION"))
                    .build();
                let tracer = provider.tracer_with_scope(scope);
                Active { provider, tracer }
            }),
        }
    }

    pub fn is_enabled(&self) -> bool {
        self.active.is_some()
    }

    /// The tracer, for spans that tool code starts itself.
    pub fn tracer(&self) -> Option<&SdkTracer> {
        self.active.as_ref().map(|a| &a.tracer)
    }

    /// Open the SERVER span of a message that passed envelope validation.
    pub fn begin(&mut self, msg: &Message) -> Span {
        let Some(active) = self.active.as_ref() else { return Span(None) };
        let mut attributes =
            vec![KeyValue::new("mcp.method.name", msg.method.clone()), KeyValue::new("network.transport", "pipe")];
        if let Some(id) = &msg.id {
            attributes.push(KeyValue::new("jsonrpc.request.id", id.display()));
        }
        let tool = msg.param("name").and_then(|n| n.as_str()).map(str::to_string);
        if msg.method == "tools/call" {
            attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            if let Some(tool) = &tool {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
            }
        }
        let name = match (msg.method.as_str(), tool) {
            ("tools/call", Some(tool)) => format!("tools/call {tool}"),
            (method, _) => method.to_string(),
        };
        let parent = remote_parent(msg);
        let span = active
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&active.tracer, &parent);
        Span(Some(parent.with_span(span)))
    }

    /// Make the span current (tool code's own spans become its children)
    /// until the guard is dropped.
    pub fn enter(&self, span: &Span) -> Option<ContextGuard> {
        span.0.as_ref().map(|cx| cx.clone().attach())
    }

    /// The span as a W3C traceparent, for work done in another process.
    pub fn traceparent(&self, span: &Span) -> Option<String> {
        let cx = span.0.as_ref()?;
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| format!("00-{}-{}-{:02x}", sc.trace_id(), sc.span_id(), sc.trace_flags().to_u8()))
    }

    /// Close the span with what happened.
    pub fn end(&mut self, span: Span, facts: &Facts) {
        let Some(cx) = span.0 else { return };
        let span = cx.span();
        if let Some(v) = facts.version {
            span.set_attribute(KeyValue::new("mcp.protocol.version", VERSIONS[v].id));
        }
        if let Some(code) = facts.rpc_error {
            let code = code.code().to_string();
            span.set_attribute(KeyValue::new("error.type", code.clone()));
            span.set_attribute(KeyValue::new("rpc.response.status_code", code));
            span.set_status(Status::error(""));
        } else if facts.tool_error {
            span.set_attribute(KeyValue::new("error.type", "tool_error"));
            span.set_status(Status::error(""));
        }
        span.end();
    }

    /// In a worker process: open the span of one tool call as a child of
    /// the server span named by `traceparent` (W3C; a malformed value makes
    /// it a root). Spans that tool code starts while it is current become its
    /// children.
    pub fn begin_worker_call(&self, tool: &str, traceparent: &str) -> Span {
        let Some(active) = self.active.as_ref() else { return Span(None) };
        let parent = context_from(&[("traceparent", traceparent)]);
        let span = active
            .tracer
            .span_builder(format!("execute_tool {tool}"))
            .with_kind(SpanKind::Internal)
            .with_attributes([
                KeyValue::new("gen_ai.operation.name", "execute_tool"),
                KeyValue::new("gen_ai.tool.name", tool.to_string()),
            ])
            .start_with_context(&active.tracer, &parent);
        Span(Some(parent.with_span(span)))
    }

    /// Close a worker call's span (an error status when the tool failed) and
    /// export it at once: a worker process may be stopped at any time.
    pub fn end_worker_call(&mut self, span: Span, failed: bool) {
        let Some(cx) = span.0 else { return };
        if failed {
            cx.span().set_attribute(KeyValue::new("error.type", "tool_error"));
            cx.span().set_status(Status::error(""));
        }
        cx.span().end();
        if let Some(a) = self.active.as_ref() {
            let _ = a.provider.force_flush();
        }
    }

    /// Open the span of starting the workers (a root span): what a cold start
    /// spends on its daemons, and why serving never began if they failed.
    pub fn begin_workers_start(&self) -> Span {
        let Some(active) = self.active.as_ref() else { return Span(None) };
        let span = active.tracer.span_builder("start workers").with_kind(SpanKind::Internal).start(&active.tracer);
        Span(Some(Context::new().with_span(span)))
    }

    /// Close it, with the reason as an error status when the start failed.
    pub fn end_workers_start(&mut self, span: Span, failure: Option<&str>) {
        let Some(cx) = span.0 else { return };
        if let Some(reason) = failure {
            cx.span().set_attribute(KeyValue::new("error.type", "workers_start"));
            cx.span().set_status(Status::error(reason.to_string()));
        }
        cx.span().end();
    }

    /// Export what is pending and stop, within [`SHUTDOWN_BUDGET`] whatever
    /// the exporter does: a collector that never answers must not keep the
    /// process alive after its last answer.
    pub fn shutdown(&mut self) {
        let Some(a) = self.active.take() else { return };
        let (tx, rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new().name("mcplite-otel-shutdown".into()).spawn(move || {
            let _ = a.provider.force_flush();
            let _ = a.provider.shutdown_with_timeout(SHUTDOWN_BUDGET);
            let _ = tx.send(());
        });
        if spawned.is_ok() && rx.recv_timeout(SHUTDOWN_BUDGET).is_err() {
            say_export_failure("mcplite: exporting trace spans failed: the collector did not answer in time, so the last spans are dropped.");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The remote parent from `params._meta.traceparent` / `tracestate`; malformed
/// values give an empty context (the span becomes a root).
fn remote_parent(msg: &Message) -> Context {
    let fields: Vec<(&str, &str)> = ["traceparent", "tracestate"]
        .into_iter()
        .filter_map(|key| msg.meta_field(key).and_then(|v| v.as_str()).map(|s| (key, s)))
        .collect();
    context_from(&fields)
}

/// A remote parent from W3C trace context fields; empty if there are none.
fn context_from(fields: &[(&str, &str)]) -> Context {
    use opentelemetry::propagation::TextMapPropagator;
    if fields.is_empty() {
        return Context::new();
    }
    let carrier: HashMap<String, String> = fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    TraceContextPropagator::new().extract_with_context(&Context::new(), &carrier)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn exporter_configuration_from_the_environment() {
        assert_eq!(exporter_choice(&env_of(&[])), ExporterChoice::None);
        assert_eq!(exporter_choice(&env_of(&[("OTEL_TRACES_EXPORTER", "stderr")])), ExporterChoice::Stderr);
        assert_eq!(
            exporter_choice(&env_of(&[("OTEL_TRACES_EXPORTER", "otlp"), ("OTEL_R_TRACES_EXPORTER", "none")])),
            ExporterChoice::None,
            "the R-specific variable wins"
        );
        assert_eq!(exporter_choice(&env_of(&[("OTEL_R_TRACES_EXPORTER", "http")])), ExporterChoice::Otlp);
        assert_eq!(
            exporter_choice(&env_of(&[
                ("OTEL_R_TRACES_EXPORTER", "otlp/file"),
                ("OTEL_EXPORTER_OTLP_FILE", "/tmp/t-%N.jsonl")
            ])),
            ExporterChoice::File("/tmp/t-0.jsonl".into())
        );
        assert!(matches!(
            exporter_choice(&env_of(&[("OTEL_R_TRACES_EXPORTER", "stdout")])),
            ExporterChoice::Refused(_)
        ));
        assert!(matches!(exporter_choice(&env_of(&[("OTEL_TRACES_EXPORTER", "console")])), ExporterChoice::Refused(_)));
        assert_eq!(
            exporter_choice(&env_of(&[("OTEL_SDK_DISABLED", "true"), ("OTEL_TRACES_EXPORTER", "stderr")])),
            ExporterChoice::None
        );
    }
}
