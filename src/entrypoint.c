// Forward R's routine registration to the Rust static library (extendr's
// entry points and the glue's own, src/rust/src/entry.rs, in one table);
// referencing the symbol here also keeps the linker from dropping the library.
#include <R_ext/Rdynload.h>

void mcplite_register_routines(DllInfo *dll);
void mcplite_init_json_class(DllInfo *dll);

void R_init_mcplite(DllInfo *dll) {
  mcplite_register_routines(dll);
  mcplite_init_json_class(dll);
}
