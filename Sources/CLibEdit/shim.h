// libedit's readline interface (Debian: libedit-dev): the chat's line editing and history.
// BSD-licensed, unlike GNU readline, so linking it puts no condition on the binary.
#include <stdio.h>
#include <editline/readline.h>

// Swift 6 refuses to touch a C global directly (shared mutable state); the chat sets this
// once, under its editor's lock, through this function.
static inline void qb_libedit_keep_signals(void) { rl_catch_signals = 0; }
