// Calls made later, on a thread of their own: what the driver runs "on an
// internal thread" (user objects' destructors). They run one at a time in
// the order queued, never on the thread that queued them, and never under
// a lock of the caller's. The thread starts at the first call and sleeps
// while nothing is queued.
#pragma once

namespace cucpu {

// Queues fn(arg). Thread-safe; never blocks on a running call.
void defer_call(void (*fn)(void*), void* arg);

}  // namespace cucpu
