// Forward R's routine registration to the Rust static library; referencing the
// symbol here also keeps the linker from dropping the library.
void R_init_mcplite_extendr(void *dll);

void R_init_mcplite(void *dll) {
    R_init_mcplite_extendr(dll);
}
