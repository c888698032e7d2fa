// mps-migrate host shim: the libdispatch calls MPS host code makes. Queues run blocks on the calling thread, in
// order (a serial queue's guarantee); blocks are clang blocks (-fblocks, the Blocks runtime).
#pragma once
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif
typedef struct dispatch_queue_s* dispatch_queue_t;
typedef struct dispatch_queue_attr_s* dispatch_queue_attr_t;
typedef struct dispatch_data_s* dispatch_data_t;
typedef struct dispatch_semaphore_s* dispatch_semaphore_t;
typedef struct dispatch_group_s* dispatch_group_t;
typedef void (^dispatch_block_t)(void);
typedef uint64_t dispatch_time_t;
#define DISPATCH_QUEUE_SERIAL ((dispatch_queue_attr_t)0)
#define DISPATCH_QUEUE_CONCURRENT ((dispatch_queue_attr_t)1)
#define DISPATCH_TIME_NOW (0ull)
#define DISPATCH_TIME_FOREVER (~0ull)
#define DISPATCH_QUEUE_PRIORITY_DEFAULT 0
#define DISPATCH_DATA_DESTRUCTOR_DEFAULT ((dispatch_block_t)0)
#define QOS_CLASS_USER_INITIATED 0x19
#define QOS_CLASS_DEFAULT 0x15
dispatch_queue_t dispatch_queue_create(const char* label, dispatch_queue_attr_t attr);
dispatch_queue_attr_t dispatch_queue_attr_make_with_qos_class(dispatch_queue_attr_t attr, unsigned qos, int prio);
dispatch_queue_t dispatch_get_global_queue(long identifier, unsigned long flags);
dispatch_queue_t dispatch_get_main_queue(void);
void dispatch_sync(dispatch_queue_t q, dispatch_block_t block);
void dispatch_async(dispatch_queue_t q, dispatch_block_t block);
void dispatch_apply(size_t n, dispatch_queue_t q, void (^block)(size_t));
void dispatch_release(void* obj);
void dispatch_retain(void* obj);
const char* dispatch_queue_get_label(dispatch_queue_t q);
dispatch_data_t dispatch_data_create(const void* buffer, size_t size, dispatch_queue_t q, dispatch_block_t destructor);
size_t dispatch_data_get_size(dispatch_data_t data);
dispatch_semaphore_t dispatch_semaphore_create(long value);
long dispatch_semaphore_wait(dispatch_semaphore_t s, dispatch_time_t timeout);
long dispatch_semaphore_signal(dispatch_semaphore_t s);
dispatch_time_t dispatch_time(dispatch_time_t when, int64_t delta);
#ifdef __cplusplus
}
#endif
