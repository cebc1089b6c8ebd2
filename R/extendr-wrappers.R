# Wrappers for the #[extendr] functions of src/rust/src (the functions each
# file's extendr_module! lists) and the glue's own entry points (entry.rs,
# registered under the same `wrap__` names). Written by hand, not generated:
# one line per registered function, calling its `wrap__` symbol with the same
# arguments.
# A test (test-api.R) checks that every registered routine has its line.

#' @useDynLib mcplite, .registration = TRUE
NULL

rust_json_parse <- function(text) .Call(wrap__rust_json_parse, text)

rust_protocol_text <- function(x, what) .Call(wrap__rust_protocol_text, x, what)

rust_to_json_fixed <- function(x, arg) .Call(wrap__rust_to_json_fixed, x, arg)

rust_check <- function(kind, x, arg) .Call(wrap__rust_check, kind, x, arg)

rust_describe <- function(x) .Call(wrap__rust_describe, x)

rust_quote_names <- function(x) .Call(wrap__rust_quote_names, x)

rust_check_tool_result <- function(x) .Call(wrap__rust_check_tool_result, x)

rust_structured_edit <- function(x) .Call(wrap__rust_structured_edit, x)

rust_tool_listing <- function(spec) .Call(wrap__rust_tool_listing, spec)

rust_protocol <- function() .Call(wrap__rust_protocol)

rust_to_json <- function(x, opts, helpers) .Call(wrap__rust_to_json, x, opts, helpers)

rust_json_size <- function(x, opts, helpers) .Call(wrap__rust_json_size, x, opts, helpers)

rust_json_take_zeroed <- function() .Call(wrap__rust_json_take_zeroed)

rust_serve <- function(settings) .Call(wrap__rust_serve, settings)

rust_on_exit <- function() .Call(wrap__rust_on_exit)

rust_progress <- function(progress, total, message) .Call(wrap__rust_progress, progress, total, message)

rust_closure_scope <- function(enter) .Call(wrap__rust_closure_scope, enter)

rust_tool_failed <- function(message) .Call(wrap__rust_tool_failed, message)

rust_worker_link <- function(settings) .Call(wrap__rust_worker_link, settings)

rust_session_start <- function(settings) .Call(wrap__rust_session_start, settings)

rust_session_next <- function() .Call(wrap__rust_session_next)

rust_session_run <- function() .Call(wrap__rust_session_run)

rust_session_reschedule <- function() .Call(wrap__rust_session_reschedule)

rust_session_cwd <- function() .Call(wrap__rust_session_cwd)

rust_session_stop <- function() .Call(wrap__rust_session_stop)

rust_session_info <- function() .Call(wrap__rust_session_info)

rust_session_registration <- function(path) .Call(wrap__rust_session_registration, path)

rust_otel_start_span <- function(name, attributes, kind) .Call(wrap__rust_otel_start_span, name, attributes, kind)

rust_otel_span_set_attributes <- function(ptr, attributes) .Call(wrap__rust_otel_span_set_attributes, ptr, attributes)

rust_otel_span_add_event <- function(ptr, name, attributes) .Call(wrap__rust_otel_span_add_event, ptr, name, attributes)

rust_otel_span_set_status <- function(ptr, code, description) .Call(wrap__rust_otel_span_set_status, ptr, code, description)

rust_otel_span_update_name <- function(ptr, name) .Call(wrap__rust_otel_span_update_name, ptr, name)

rust_otel_span_end <- function(ptr) .Call(wrap__rust_otel_span_end, ptr)

rust_otel_span_activate <- function(ptr) .Call(wrap__rust_otel_span_activate, ptr)

rust_otel_span_deactivate <- function(ptr) .Call(wrap__rust_otel_span_deactivate, ptr)

rust_otel_span_ids <- function(ptr) .Call(wrap__rust_otel_span_ids, ptr)

rust_client_spawn <- function(program, args, env, clear_env, cwd, protocol, client_info) .Call(wrap__rust_client_spawn, program, args, env, clear_env, cwd, protocol, client_info)

rust_client_begin_open <- function(ptr, timeout) .Call(wrap__rust_client_begin_open, ptr, timeout)

rust_client_begin_request <- function(ptr, method, params, timeout) .Call(wrap__rust_client_begin_request, ptr, method, params, timeout)

rust_client_begin_list_tools <- function(ptr, timeout) .Call(wrap__rust_client_begin_list_tools, ptr, timeout)

rust_client_begin_call_tool <- function(ptr, name, arguments, timeout, progress) .Call(wrap__rust_client_begin_call_tool, ptr, name, arguments, timeout, progress)

rust_client_step <- function(ptr, slice) .Call(wrap__rust_client_step, ptr, slice)

rust_client_progress <- function(ptr, new_only) .Call(wrap__rust_client_progress, ptr, new_only)

rust_client_begin_call_async <- function(ptr, name, arguments, timeout, progress) .Call(wrap__rust_client_begin_call_async, ptr, name, arguments, timeout, progress)

rust_client_async_step <- function(ptr, id, slice) .Call(wrap__rust_client_async_step, ptr, id, slice)

rust_client_async_cancel <- function(ptr, id) .Call(wrap__rust_client_async_cancel, ptr, id)

rust_client_async_progress <- function(ptr) .Call(wrap__rust_client_async_progress, ptr)

rust_client_abandon <- function(ptr) .Call(wrap__rust_client_abandon, ptr)

rust_client_notify <- function(ptr, method, params) .Call(wrap__rust_client_notify, ptr, method, params)

rust_client_notifications <- function(ptr, clear) .Call(wrap__rust_client_notifications, ptr, clear)

rust_client_stderr <- function(ptr) .Call(wrap__rust_client_stderr, ptr)

rust_client_state <- function(ptr) .Call(wrap__rust_client_state, ptr)

rust_client_close_step <- function(ptr, slice, kill) .Call(wrap__rust_client_close_step, ptr, slice, kill)

rust_client_close <- function(ptr, grace) .Call(wrap__rust_client_close, ptr, grace)

rust_check_listings <- function(listings) .Call(wrap__rust_check_listings, listings)

rust_check_finding <- function(rule, message, fix, tool, version) .Call(wrap__rust_check_finding, rule, message, fix, tool, version)

rust_check_frame <- function(findings) .Call(wrap__rust_check_frame, findings)

rust_json_pretty <- function(x) .Call(wrap__rust_json_pretty, x)

rust_base64 <- function(x) .Call(wrap__rust_base64, x)

rust_config_merge <- function(text, format, key, name, entry, file) .Call(wrap__rust_config_merge, text, format, key, name, entry, file)

rust_config_write <- function(path, format, key, name, entry) .Call(wrap__rust_config_write, path, format, key, name, entry)

rust_config_default_path <- function(client) .Call(wrap__rust_config_default_path, client)

rust_config_clients <- function() .Call(wrap__rust_config_clients)

rust_config_expand_home <- function(path) .Call(wrap__rust_config_expand_home, path)

rust_client_transcript <- function(ptr, on) .Call(wrap__rust_client_transcript, ptr, on)

rust_client_check_output <- function(ptr, on) .Call(wrap__rust_client_check_output, ptr, on)

rust_worker_tracing_start <- function() .Call(wrap__rust_worker_tracing_start)

rust_worker_span_begin <- function(traceparent, tool) .Call(wrap__rust_worker_span_begin, traceparent, tool)

rust_worker_span_end <- function(failed) .Call(wrap__rust_worker_span_end, failed)

rust_worker_detach_stdio <- function() .Call(wrap__rust_worker_detach_stdio)

rust_worker_progress_begin <- function(progress) .Call(wrap__rust_worker_progress_begin, progress)

rust_worker_progress_end <- function() .Call(wrap__rust_worker_progress_end)

rust_running_script <- function(file) .Call(wrap__rust_running_script, file)

rust_private_dir <- function(prefix) .Call(wrap__rust_private_dir, prefix)

rust_process_start <- function(pid) .Call(wrap__rust_process_start, pid)

rust_kill_process <- function(pid, start) .Call(wrap__rust_kill_process, pid, start)

rust_console_guard <- function(enter) .Call(wrap__rust_console_guard, enter)
