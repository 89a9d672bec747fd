/* A shared object without the module symbol: the loader must refuse it. */
int notmodule_answer(void);
__attribute__((visibility("default"))) int notmodule_answer(void) {
        return 42;
}
