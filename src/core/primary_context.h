// Primary contexts: one per device, created on first use, retained and
// released by count, emptied (not destroyed) when the count reaches zero or
// on reset; and the tear-down every context goes through.
//
// Each function takes rt().primary_mu itself; none runs a client's
// callback with it held (tear_down runs the context-local storage
// destructors first, with no runtime lock).
#pragma once

#include "cuda.h"

namespace cucpu {

struct Device;
class Context;

// The device's primary context, created if needed but neither retained nor
// activated (what cudart's private table asks for before it retains it).
Context* primary_context(Device& d);
// Retains the primary context; the first retain activates it with the
// device's primary flags and a clear sticky error.
Context* primary_retain(Device& d);
// Drops one retain; the last one empties the context. INVALID_CONTEXT when
// it is not retained.
CUresult primary_release(Device& d);
// Empties the primary context and forgets its retains and flags.
void primary_reset(Device& d);
void primary_set_flags(Device& d, unsigned flags);
void primary_state(Device& d, unsigned* flags, bool* active);

// Frees what a context owns: runs client libraries' context-local storage
// destructors (the context still works then), stops its work, waits for
// every context's streams (they may use this context's memory), unloads
// its modules and frees its memory. A user context is then destroyed by
// the caller; a primary one stays, empty.
void tear_down(Context* c);

}  // namespace cucpu
