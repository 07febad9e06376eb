// The work of a whole context, as one: recorded in an event, or made to
// wait for one (cuCtxRecordEvent and cuCtxWaitEvent; cuGreenCtxRecordEvent
// and cuGreenCtxWaitEvent on a green context's converted context). A
// primary context's work includes its green contexts'
// (Context::for_each_work_context).
#pragma once

#include "cuda.h"

namespace cucpu {

class Context;
class Event;
class Stream;

// Records in `e` every op enqueued so far on `c`'s streams (its legacy
// stream and every stream made in it): `e` completes once they all have.
// STREAM_CAPTURE_UNSUPPORTED, invalidating the captures, while a stream of
// `c`'s work captures.
CUresult record_context_work(Context* c, Event* e);
// Makes the work enqueued from now on in each stream of `c` (its legacy
// stream included) wait for what `e` holds. STREAM_CAPTURE_UNSUPPORTED,
// invalidating the captures, while a stream of `c`'s work captures;
// CAPTURED_EVENT, invalidating its capture, when `e` was last recorded in a
// live one.
CUresult context_wait_event(Context* c, Event* e);
// A stream just made in `c` takes on the context's waits still pending
// (driver 580: streams made after cuGreenCtxWaitEvent wait too).
void join_context_waits(Context* c, Stream* s);

}  // namespace cucpu
