# OpenMP shim: the same source builds with and without OpenMP
# (pattern of sklearn/utils/_openmp_helpers).
cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define PTC_HAVE_OPENMP 1
    #else
    #define PTC_HAVE_OPENMP 0
    static inline void omp_set_num_threads(int n) { (void)n; }
    static inline int omp_get_max_threads(void) { return 1; }
    static inline int omp_get_thread_num(void) { return 0; }
    #endif
    """
    bint PTC_HAVE_OPENMP
    void omp_set_num_threads(int n) noexcept nogil
    int omp_get_max_threads() noexcept nogil
    int omp_get_thread_num() noexcept nogil
