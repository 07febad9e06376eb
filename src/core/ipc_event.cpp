// Interprocess events (core/ipc.h): their words, handles, records and waits.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/memory_file.h"
#include "core/allocator.h"
#include "core/context.h"
#include "core/event.h"
#include "core/ipc.h"
#include "core/mem_ops.h"
#include "core/runtime.h"
#include "core/stream.h"

namespace cucpu {
namespace {

constexpr char kMagic[8] = {'c', 'u', 'c', 'p', 'u', 'I', 'P', 'E'};

// What a CUipcEventHandle carries: the words' memory file, named as
// /proc/PID/fd/FD and checked by its device and inode.
struct Wire {
  char magic[8];
  uint64_t dev;
  uint64_t ino;
  int32_t pid;
  int32_t fd;
};
static_assert(sizeof(Wire) <= sizeof(CUipcEventHandle), "a handle holds the wire form");
static_assert(sizeof(IpcEventWords) <= kPage, "the words fit a page");

std::shared_ptr<IpcEventWords> map_words(int fd) {
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<IpcEventWords>(static_cast<IpcEventWords*>(p), [](IpcEventWords* w) { munmap(w, kPage); });
}

// Record `seq` done, unless a later one is already (records of several
// processes may finish out of order).
void record_done(IpcEventWords& w, uint64_t seq) {
  uint64_t c = w.completed.load(std::memory_order_acquire);
  while (c < seq && !w.completed.compare_exchange_weak(c, seq, std::memory_order_acq_rel)) {
  }
}

// The end of a record: its number is done once the stream gets here.
class IpcEventDoneOp final : public Op {
 public:
  const char* trace_literal() const override { return "interprocess event record"; }
  IpcEventDoneOp(std::shared_ptr<IpcEventWords> words, uint64_t seq) : words_(std::move(words)), seq_(seq) {}
  void execute(int) override { record_done(*words_, seq_); }
  bool trivial() const override { return true; }

 private:
  std::shared_ptr<IpcEventWords> words_;
  uint64_t seq_;
};

}  // namespace

CUresult ipc_event_share(Event* e) {
  const int fd = make_memory_file("cucpu-ipc-event", kPage);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  std::shared_ptr<IpcEventWords> words = map_words(fd);
  if (!words) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  e->ipc = std::move(words);  // a new file reads as zeros: nothing recorded
  e->ipc_fd = fd;
  return CUDA_SUCCESS;
}

CUresult ipc_event_export(Event* e, CUipcEventHandle* out) {
  if (!e->ipc || e->ipc_fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // not made with CU_EVENT_INTERPROCESS (driver 580)
  struct stat st {};
  if (fstat(e->ipc_fd, &st) != 0) return CUDA_ERROR_UNKNOWN;
  Wire w{};
  std::memcpy(w.magic, kMagic, sizeof kMagic);
  w.dev = st.st_dev;
  w.ino = st.st_ino;
  w.pid = getpid();
  w.fd = e->ipc_fd;
  std::memset(out, 0, sizeof *out);
  std::memcpy(out->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}

CUresult ipc_event_open(Context* c, const CUipcEventHandle& h, CUevent* out) {
  Wire w;
  std::memcpy(&w, h.reserved, sizeof w);
  if (std::memcmp(w.magic, kMagic, sizeof kMagic) != 0) return CUDA_ERROR_INVALID_VALUE;
  const int fd = open_peer_file(w.pid, w.fd, w.dev, w.ino, kPage);
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // its process is gone, or destroyed the event
  std::shared_ptr<IpcEventWords> words = map_words(fd);
  if (!words) {
    close(fd);
    return CUDA_ERROR_INVALID_HANDLE;
  }
  Event* e = rt().events.create(c->owner, c->owner->id, unsigned{CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING});
  e->ipc = std::move(words);
  e->ipc_fd = fd;  // kept: this process may export the event again
  *out = reinterpret_cast<CUevent>(e);
  return CUDA_SUCCESS;
}

void ipc_event_record(Event* e, Stream* s) {
  const uint64_t seq = e->ipc->recorded.fetch_add(1, std::memory_order_acq_rel) + 1;
  s->enqueue(new IpcEventDoneOp(e->ipc, seq));
}

bool ipc_event_reached(Event* e) {
  const uint64_t recorded = e->ipc->recorded.load(std::memory_order_acquire);
  return e->ipc->completed.load(std::memory_order_acquire) >= recorded;
}

void ipc_event_synchronize(Event* e) {
  const uint64_t target = e->ipc->recorded.load(std::memory_order_acquire);
  // Another process marks it done: no wake-up reaches this one, so poll,
  // briefly spinning, then sleeping in growing steps up to 100 us.
  for (int polls = 0; e->ipc->completed.load(std::memory_order_acquire) < target; ++polls) {
    if (polls < 256) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(std::min(100, (polls - 256) / 8 + 1)));
  }
}

void ipc_event_stream_wait(Event* e, Stream* s) {
  const uint64_t target = e->ipc->recorded.load(std::memory_order_acquire);
  if (e->ipc->completed.load(std::memory_order_acquire) >= target) return;
  MemOpSpec wait;
  wait.kind = MemOpSpec::Kind::kWait64;
  wait.condition = CU_STREAM_WAIT_VALUE_GEQ;
  wait.addr = reinterpret_cast<uintptr_t>(&e->ipc->completed);
  wait.value = target;  // wait.check names no allocation: the op keeps the words mapped
  s->enqueue(new MemOpsOp({wait}, e->ipc));
}

}  // namespace cucpu
