// JSON text the Rust serializer made, held by R as a character vector of
// length one whose string R makes only when R code reads it.
//
// tool_result() keeps its structured content's JSON in the result (it is also
// the text fallback, `result$content[[1]]$text`). Making an R string of it
// costs a hash and a copy of every byte, and checking it again before it is
// written costs another pass; a server that only sends the result needs
// neither. This class keeps the bytes in a raw vector that no R code can
// reach, and makes the string (data2) the first time R asks for it.
//
// data1 is list(bytes, source): the raw vector and the R value the JSON was
// written from. The source tells the server whether `structured_content` is
// still the value its JSON was written from: holding it here makes R copy it
// before any change (its reference count is above one), so a result whose
// `structured_content` is the very same object cannot have changed since.
//
// Trust: while data1 is set, the string is exactly those bytes, so the server
// writes them without validating them (mcplite_json_bytes()). Anything that
// may change the string (a write, a writable data pointer) first drops data1,
// and from then on the server treats the value like any other R string.
//
// These methods run inside R (not Rust), so R errors here are ordinary.
#include <string.h>
#include <R.h>
#include <Rinternals.h>
#include <R_ext/Altrep.h>
#include <R_ext/Rdynload.h>

static R_altrep_class_t json_class;

// The string, made on first use.
static SEXP json_strings(SEXP x) {
  SEXP s = R_altrep_data2(x);
  if (s == R_NilValue) {
    SEXP raw = VECTOR_ELT(R_altrep_data1(x), 0);
    s = PROTECT(allocVector(STRSXP, 1));
    SET_STRING_ELT(s, 0, mkCharLenCE((const char *) RAW(raw), (int) XLENGTH(raw), CE_UTF8));
    R_set_altrep_data2(x, s);
    UNPROTECT(1);
  }
  return s;
}

static R_xlen_t json_length(SEXP x) {
  return 1;
}

static SEXP json_elt(SEXP x, R_xlen_t i) {
  return STRING_ELT(json_strings(x), i);
}

static void json_set_elt(SEXP x, R_xlen_t i, SEXP v) {
  SEXP s = json_strings(x);
  R_set_altrep_data1(x, R_NilValue);
  SET_STRING_ELT(s, i, v);
}

static void *json_dataptr(SEXP x, Rboolean writeable) {
  SEXP s = json_strings(x);
  if (writeable) R_set_altrep_data1(x, R_NilValue);
  return (void *) STRING_PTR_RO(s);
}

static const void *json_dataptr_or_null(SEXP x) {
  SEXP s = R_altrep_data2(x);
  return s == R_NilValue ? NULL : (const void *) STRING_PTR_RO(s);
}

static int json_no_na(SEXP x) {
  return R_altrep_data1(x) != R_NilValue;
}

// A copy shares the (never modified) bytes and their source, so it is
// trusted too.
static SEXP json_duplicate(SEXP x, Rboolean deep) {
  SEXP data = R_altrep_data1(x);
  if (data == R_NilValue) return NULL;
  return R_new_altrep(json_class, data, R_NilValue);
}

static Rboolean json_inspect(SEXP x, int pre, int deep, int pvec,
                             void (*inspect_subtree)(SEXP, int, int, int)) {
  SEXP data = R_altrep_data1(x);
  Rprintf(" mcplite JSON text (%s, %s)\n",
          data == R_NilValue ? "changed by R" : "as written",
          R_altrep_data2(x) == R_NilValue ? "no R string yet" : "R string made");
  return TRUE;
}

void mcplite_init_json_class(DllInfo *dll) {
  json_class = R_make_altstring_class("json_text", "mcplite", dll);
  R_set_altrep_Length_method(json_class, json_length);
  R_set_altrep_Duplicate_method(json_class, json_duplicate);
  R_set_altrep_Inspect_method(json_class, json_inspect);
  R_set_altvec_Dataptr_method(json_class, json_dataptr);
  R_set_altvec_Dataptr_or_null_method(json_class, json_dataptr_or_null);
  R_set_altstring_Elt_method(json_class, json_elt);
  R_set_altstring_Set_elt_method(json_class, json_set_elt);
  R_set_altstring_No_NA_method(json_class, json_no_na);
}

// A new JSON text holding a copy of `len` bytes (valid UTF-8 without NUL, at
// most INT_MAX bytes: the caller checks), written from `source`. Allocates:
// call under protection.
SEXP mcplite_json_text(const unsigned char *bytes, R_xlen_t len, SEXP source) {
  SEXP data = PROTECT(allocVector(VECSXP, 2));
  SEXP raw = allocVector(RAWSXP, len);
  SET_VECTOR_ELT(data, 0, raw);
  if (len > 0) memcpy(RAW(raw), bytes, (size_t) len);
  SET_VECTOR_ELT(data, 1, source);
  SEXP x = R_new_altrep(json_class, data, R_NilValue);
  UNPROTECT(1);
  return x;
}

// The bytes of `x` if it is a JSON text R code cannot have changed; never
// allocates or fails.
int mcplite_json_bytes(SEXP x, const unsigned char **bytes, R_xlen_t *len) {
  if (!R_altrep_inherits(x, json_class)) return 0;
  SEXP data = R_altrep_data1(x);
  if (TYPEOF(data) != VECSXP) return 0;
  SEXP raw = VECTOR_ELT(data, 0);
  *bytes = RAW(raw);
  *len = XLENGTH(raw);
  return 1;
}

// Whether `x` is a JSON text R code cannot have changed that was written
// from `value` itself (the same object); never allocates or fails.
int mcplite_json_written_from(SEXP x, SEXP value) {
  if (!R_altrep_inherits(x, json_class)) return 0;
  SEXP data = R_altrep_data1(x);
  return TYPEOF(data) == VECSXP && VECTOR_ELT(data, 1) == value;
}
