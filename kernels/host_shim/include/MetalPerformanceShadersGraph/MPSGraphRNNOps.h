// mps-migrate host shim: MPSGraph's recurrent ops (single-gate RNN, LSTM, GRU) and their descriptors
// (declarations only). Each op returns its outputs as an array: for training, the forward ops add the z state
// (and the LSTM its cell state), which the gradient ops take back.
#pragma once
#include <MetalPerformanceShadersGraph/MPSGraphCore.h>

typedef NS_ENUM(NSUInteger, MPSGraphRNNActivation){MPSGraphRNNActivationNone = 0, MPSGraphRNNActivationRelu = 1,
                                                   MPSGraphRNNActivationTanh = 2, MPSGraphRNNActivationSigmoid = 3,
                                                   MPSGraphRNNActivationHardSigmoid = 4};

@interface MPSGraphSingleGateRNNDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptor;
@property(nonatomic) BOOL reverse, bidirectional, training;
@property(nonatomic) MPSGraphRNNActivation activation;
@end
@interface MPSGraphLSTMDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptor;
@property(nonatomic) BOOL reverse, bidirectional, produceCell, training, forgetGateLast;
@property(nonatomic) MPSGraphRNNActivation inputGateActivation, forgetGateActivation, cellGateActivation,
    outputGateActivation, activation;
@end
@interface MPSGraphGRUDescriptor : MPSGraphObject <NSCopying>
+ (instancetype)descriptor;
@property(nonatomic) BOOL reverse, bidirectional, training, resetGateFirst, resetAfter, flipZ;
@property(nonatomic) MPSGraphRNNActivation updateGateActivation, resetGateActivation, outputGateActivation;
@end

@interface MPSGraph (MPSGraphRNNOps)
- (NSArray<MPSGraphTensor*>*)singleGateRNNWithSourceTensor:(MPSGraphTensor*)source
                                           recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                               inputWeight:(MPSGraphTensor*)inputWeight
                                                      bias:(MPSGraphTensor*)bias
                                                 initState:(MPSGraphTensor*)initState
                                                      mask:(MPSGraphTensor*)mask
                                                descriptor:(MPSGraphSingleGateRNNDescriptor*)descriptor
                                                      name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)singleGateRNNWithSourceTensor:(MPSGraphTensor*)source
                                           recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                               inputWeight:(MPSGraphTensor*)inputWeight
                                                      bias:(MPSGraphTensor*)bias
                                                 initState:(MPSGraphTensor*)initState
                                                descriptor:(MPSGraphSingleGateRNNDescriptor*)descriptor
                                                      name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)singleGateRNNGradientsWithSourceTensor:(MPSGraphTensor*)source
                                                    recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                                     sourceGradient:(MPSGraphTensor*)sourceGradient
                                                             zState:(MPSGraphTensor*)zState
                                                      stateGradient:(MPSGraphTensor*)stateGradient
                                                        inputWeight:(MPSGraphTensor*)inputWeight
                                                               bias:(MPSGraphTensor*)bias
                                                          initState:(MPSGraphTensor*)initState
                                                               mask:(MPSGraphTensor*)mask
                                                         descriptor:(MPSGraphSingleGateRNNDescriptor*)descriptor
                                                               name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMWithSourceTensor:(MPSGraphTensor*)source
                                  recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                      inputWeight:(MPSGraphTensor*)inputWeight
                                             bias:(MPSGraphTensor*)bias
                                        initState:(MPSGraphTensor*)initState
                                         initCell:(MPSGraphTensor*)initCell
                                             mask:(MPSGraphTensor*)mask
                                         peephole:(MPSGraphTensor*)peephole
                                       descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                             name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMWithSourceTensor:(MPSGraphTensor*)source
                                  recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                      inputWeight:(MPSGraphTensor*)inputWeight
                                             bias:(MPSGraphTensor*)bias
                                        initState:(MPSGraphTensor*)initState
                                         initCell:(MPSGraphTensor*)initCell
                                       descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                             name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMWithSourceTensor:(MPSGraphTensor*)source
                                  recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                        initState:(MPSGraphTensor*)initState
                                         initCell:(MPSGraphTensor*)initCell
                                       descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                             name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMGradientsWithSourceTensor:(MPSGraphTensor*)source
                                           recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                            sourceGradient:(MPSGraphTensor*)sourceGradient
                                                    zState:(MPSGraphTensor*)zState
                                             cellOutputFwd:(MPSGraphTensor*)cellOutputFwd
                                             stateGradient:(MPSGraphTensor*)stateGradient
                                              cellGradient:(MPSGraphTensor*)cellGradient
                                               inputWeight:(MPSGraphTensor*)inputWeight
                                                      bias:(MPSGraphTensor*)bias
                                                 initState:(MPSGraphTensor*)initState
                                                  initCell:(MPSGraphTensor*)initCell
                                                      mask:(MPSGraphTensor*)mask
                                                  peephole:(MPSGraphTensor*)peephole
                                                descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                                      name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMGradientsWithSourceTensor:(MPSGraphTensor*)source
                                           recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                            sourceGradient:(MPSGraphTensor*)sourceGradient
                                                    zState:(MPSGraphTensor*)zState
                                             cellOutputFwd:(MPSGraphTensor*)cellOutputFwd
                                               inputWeight:(MPSGraphTensor*)inputWeight
                                                      bias:(MPSGraphTensor*)bias
                                                 initState:(MPSGraphTensor*)initState
                                                  initCell:(MPSGraphTensor*)initCell
                                                descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                                      name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)LSTMGradientsWithSourceTensor:(MPSGraphTensor*)source
                                           recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                            sourceGradient:(MPSGraphTensor*)sourceGradient
                                                    zState:(MPSGraphTensor*)zState
                                             cellOutputFwd:(MPSGraphTensor*)cellOutputFwd
                                                descriptor:(MPSGraphLSTMDescriptor*)descriptor
                                                      name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)GRUWithSourceTensor:(MPSGraphTensor*)source
                                 recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                     inputWeight:(MPSGraphTensor*)inputWeight
                                            bias:(MPSGraphTensor*)bias
                                       initState:(MPSGraphTensor*)initState
                                            mask:(MPSGraphTensor*)mask
                                   secondaryBias:(MPSGraphTensor*)secondaryBias
                                      descriptor:(MPSGraphGRUDescriptor*)descriptor
                                            name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)GRUWithSourceTensor:(MPSGraphTensor*)source
                                 recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                     inputWeight:(MPSGraphTensor*)inputWeight
                                            bias:(MPSGraphTensor*)bias
                                       initState:(MPSGraphTensor*)initState
                                      descriptor:(MPSGraphGRUDescriptor*)descriptor
                                            name:(NSString*)name;
- (NSArray<MPSGraphTensor*>*)GRUGradientsWithSourceTensor:(MPSGraphTensor*)source
                                          recurrentWeight:(MPSGraphTensor*)recurrentWeight
                                           sourceGradient:(MPSGraphTensor*)sourceGradient
                                                   zState:(MPSGraphTensor*)zState
                                                outputFwd:(MPSGraphTensor*)outputFwd
                                            stateGradient:(MPSGraphTensor*)stateGradient
                                              inputWeight:(MPSGraphTensor*)inputWeight
                                                     bias:(MPSGraphTensor*)bias
                                                initState:(MPSGraphTensor*)initState
                                                     mask:(MPSGraphTensor*)mask
                                            secondaryBias:(MPSGraphTensor*)secondaryBias
                                               descriptor:(MPSGraphGRUDescriptor*)descriptor
                                                     name:(NSString*)name;
@end
