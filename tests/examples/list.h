/* PyTorch's own examples, shortened from outside, traced on the simulated driver: the verdict an
 * expert gives after reading each program. */
TEST_ENTRY(examples_imagenet_no_workers)
TEST_ENTRY(examples_imagenet_cudnn_benchmark)
TEST_ENTRY(examples_mnist)
TEST_ENTRY(examples_vae)
TEST_ENTRY(examples_mnist_rnn)
TEST_ALONE(examples_imagenet_two_workers)
TEST_ENTRY(examples_imagenet_cudnn_benchmark_training)
TEST_ALONE(examples_imagenet_four_workers)
