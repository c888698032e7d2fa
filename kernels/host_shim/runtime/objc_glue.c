// Code compiled with clang's -fobjc-runtime=gnustep-1.5 (the mode that lowers Objective-C subscripts) running on
// GNU libobjc (gcc's ABI 8):
//  - objc_msg_lookup_sender / objc_slot_lookup_super: GNUstep 1.x returns a slot whose IMP clang reads at offset 32;
//    one immutable slot per IMP is kept.
//  - __objc_exec_class (wrapped with -Wl,--wrap): GNUstep modules say version 9 (GNU libobjc wants 8); their
//    instance sizes are negative sizes relative to the superclass and ivar offsets relative to its end; protocols
//    say version 3 (GNU wants 2). They are rewritten to what GNU libobjc expects before it registers them.
//  - protocols a unit only names (@protocol(X)) get the Protocol class as isa, so conformance checks work.
//  - __gnustep_objcxx_personality_v0 forwards to the C++ personality: C++ exceptions cross Objective-C++ frames.
#define _GNU_SOURCE
#include <objc/message.h>
#include <objc/runtime.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

struct glue_slot {
  void* owner;
  void* cached_for;
  const char* types;
  int version;
  IMP method;
};

#define SLOT_BITS 14
#define SLOTS (1u << SLOT_BITS)
static struct {
  IMP imp;
  struct glue_slot* slot;
} slot_table[SLOTS];
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static struct glue_slot* slot_for(IMP imp) {
  size_t h = (size_t)(((uintptr_t)imp >> 4) * 0x9E3779B97F4A7C15ull >> (64 - SLOT_BITS));
  pthread_mutex_lock(&slot_lock);
  for (size_t i = 0; i < SLOTS; i++) {
    size_t j = (h + i) & (SLOTS - 1);
    if (slot_table[j].imp == imp) {
      pthread_mutex_unlock(&slot_lock);
      return slot_table[j].slot;
    }
    if (!slot_table[j].imp) {
      struct glue_slot* s = calloc(1, sizeof *s);
      s->method = imp;
      slot_table[j].slot = s;
      slot_table[j].imp = imp;
      pthread_mutex_unlock(&slot_lock);
      return s;
    }
  }
  pthread_mutex_unlock(&slot_lock);
  abort();
}

static void fix_pending(void);
static volatile int pending_count = 0;

struct glue_slot* objc_msg_lookup_sender(id* receiver, SEL sel, id sender) {
  (void)sender;
  if (pending_count) fix_pending();
  return slot_for(objc_msg_lookup(*receiver, sel));
}

struct glue_slot* objc_slot_lookup_super(struct objc_super* super, SEL sel) {
  if (pending_count) fix_pending();
  return slot_for(objc_msg_lookup_super(super, sel));
}

struct gs_ivar {
  const char* name;
  const char* type;
  int offset;
};
struct gs_ivar_list {
  int count;
  struct gs_ivar ivars[];
};
struct gs_class {  // GNU ABI-8 class with clang's GNUstep trailer
  struct gs_class* isa;
  void* super_class;
  const char* name;
  long version;
  unsigned long info;
  long instance_size;
  struct gs_ivar_list* ivars;
  void* methods;
  void* dtable;
  void* subclass_list;
  void* sibling;
  void* protocols;
  void* gc_object_type;
  long abi_version;
  int** ivar_offsets;
  void* properties;
  long strong, weak;
};
struct gs_protocol_list {
  struct gs_protocol_list* next;
  size_t count;
  struct gs_protocol* list[];
};
struct gs_protocol {
  void* isa;
  const char* name;
  struct gs_protocol_list* protocols;
  void* inst_methods;
  void* cls_methods;
};
struct gs_symtab {
  unsigned long sel_ref_cnt;
  void* refs;
  unsigned short cls_def_cnt, cat_def_cnt;
  void* defs[];
};
struct gs_module {
  unsigned long version, size;
  const char* name;
  struct gs_symtab* symtab;
};
struct gs_category {
  const char* name;
  const char* class_name;
  void* inst_methods;
  void* cls_methods;
  struct gs_protocol_list* protocols;
};

#define MAX_PENDING 65536
static struct gs_class* pending[MAX_PENDING];
static pthread_mutex_t fix_lock = PTHREAD_MUTEX_INITIALIZER;

static void fix_protocols(struct gs_protocol_list* pl) {
  for (; pl; pl = pl->next)
    for (size_t i = 0; i < pl->count; i++) {
      struct gs_protocol* p = pl->list[i];
      if ((uintptr_t)p->isa == 3) {
        p->isa = (void*)2;
        fix_protocols(p->protocols);
      }
    }
}

static int is_pending(struct gs_class* c) {
  for (int i = 0; i < pending_count; i++)
    if (pending[i] == c) return 1;
  return 0;
}

// 1: laid out (or nothing to do); 0: the superclass is not known or not laid out yet.
static int fix_class(struct gs_class* c) {
  long super_size = 0;
  if (c->super_class) {
    struct gs_class* s = (c->info & 0x8) ? c->super_class : (struct gs_class*)objc_lookUpClass(c->super_class);
    if (!s || is_pending(s)) return 0;
    super_size = s->instance_size;
  }
  c->instance_size = super_size - c->instance_size;
  if (c->ivars)
    for (int i = 0; i < c->ivars->count; i++) {
      c->ivars->ivars[i].offset += (int)super_size;
      if (c->ivar_offsets && c->ivar_offsets[i]) *c->ivar_offsets[i] = c->ivars->ivars[i].offset;
    }
  return 1;
}

static void fix_pending(void) {
  pthread_mutex_lock(&fix_lock);
  int progress = 1;
  while (pending_count && progress) {
    progress = 0;
    for (int i = 0; i < pending_count; i++)
      if (fix_class(pending[i])) {
        pending[i] = pending[--pending_count];
        i--;
        progress = 1;
      }
  }
  pthread_mutex_unlock(&fix_lock);
}

void __real___objc_exec_class(struct gs_module* m);
void __wrap___objc_exec_class(struct gs_module* m) {
  struct gs_symtab* st = m->symtab;
  if (m->version == 9) {
    m->version = 8;
    for (int i = 0; i < st->cls_def_cnt; i++) {
      struct gs_class* c = st->defs[i];
      pthread_mutex_lock(&fix_lock);
      if (pending_count < MAX_PENDING) pending[pending_count++] = c;
      pthread_mutex_unlock(&fix_lock);
      fix_protocols(c->protocols);
    }
    for (int i = 0; i < st->cat_def_cnt; i++)
      fix_protocols(((struct gs_category*)st->defs[st->cls_def_cnt + i])->protocols);
  }
  __real___objc_exec_class(m);
  if (pending_count) fix_pending();
  Class proto = objc_lookUpClass("Protocol");
  for (int i = 0; proto && i < st->cat_def_cnt; i++) {
    struct gs_category* cat = st->defs[st->cls_def_cnt + i];
    if (strcmp(cat->class_name, "__ObjC_Protocol_Holder_Ugly_Hack") != 0) continue;
    for (struct gs_protocol_list* pl = cat->protocols; pl; pl = pl->next)
      for (size_t j = 0; j < pl->count; j++)
        if ((uintptr_t)pl->list[j]->isa == 2) pl->list[j]->isa = proto;
  }
}

extern _Unwind_Reason_Code __gxx_personality_v0(int, _Unwind_Action, uint64_t, struct _Unwind_Exception*,
                                                struct _Unwind_Context*);
_Unwind_Reason_Code __gnustep_objcxx_personality_v0(int v, _Unwind_Action a, uint64_t c, struct _Unwind_Exception* e,
                                                    struct _Unwind_Context* x) {
  return __gxx_personality_v0(v, a, c, e, x);
}
