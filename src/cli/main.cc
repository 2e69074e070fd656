#include <cstdio>

int main() {
  std::puts("smbkit 0.1.0");
  return 0;
}
