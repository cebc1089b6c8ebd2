# Payload JSON options, as the user set them (NULL when unset). Read once
# when a result is built and once when the server starts; the list returned
# here is exactly the `opts` argument of rust_to_json(), and the Rust core
# checks it (`r::options::read`, the one place the rules live).

payload_options <- function(call = sys.call(-1)) {
  given <- list(
    null = getOption("mcplite.json.null"),
    na = getOption("mcplite.json.na"),
    auto_unbox = getOption("mcplite.json.auto_unbox"),
    digits = getOption("mcplite.json.digits")
  )
  author_check("payload_options", given, "options", call = call)
  given
}

# The payload options as set (NULL when unset), for setting them on workers.
payload_option_names <- c("mcplite.json.null", "mcplite.json.na",
                          "mcplite.json.auto_unbox", "mcplite.json.digits")

payload_option_values <- function() {
  values <- lapply(payload_option_names, getOption)
  names(values) <- payload_option_names
  values
}
