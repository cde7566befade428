// Builds the precompiled header every Catch2 test reuses (test/CMakeLists.txt). It is linked
// against Catch2's shared main so that it is an ordinary test executable with no tests.
