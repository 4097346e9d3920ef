// Reader stub: filled in by the live-server work (see src/layers.cmake io_readers).
#pragma once
