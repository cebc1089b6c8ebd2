// Forward R's routine registration to the Rust static library; referencing the
// symbol here also keeps the linker from dropping the library.
#include <R_ext/Rdynload.h>

void R_init_mcplite_extendr(void *dll);
void mcplite_init_json_class(DllInfo *dll);

void R_init_mcplite(DllInfo *dll) {
  R_init_mcplite_extendr(dll);
  mcplite_init_json_class(dll);
}
